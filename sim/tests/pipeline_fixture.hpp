// Test fixture: a pipeline of one rank per stage whose forward/backward steps are single compute ops of
// fixed length, with fixed-cost P2P transfers. The golden tests build their hand-worked cases with it.
#pragma once

#include "moetwin/engine/engine.hpp"
#include "moetwin/sim/pipeline_program.hpp"

namespace moetwin::testing_support {

struct UnitPipeline {
  int pp = 1, vpp = 1, microbatches = 1;
  TimeNs forward = 100;   // per chunk
  TimeNs backward = 200;  // per chunk
  TimeNs p2p = 0;         // per transfer
  std::int32_t host_ns = 0;
  bool p2p_device_sync = true;
  P2pMode p2p_mode = P2pMode::blocking;
  bool combine_steady_steps = false;
};

class UnitEmitter : public StageEmitter {
 public:
  explicit UnitEmitter(const UnitPipeline& u) : u_(u) {}
  int forward(Program& p, const StepContext& s) override {
    return add(p, s, u_.forward, OpPhase::forward, "F");
  }
  int backward(Program& p, const StepContext& s) override {
    return add(p, s, u_.backward, OpPhase::backward, "B");
  }
  OpSpec p2p(bool fwd, int, int) override {
    OpSpec op;
    op.duration = u_.p2p;
    op.host_ns = u_.host_ns;
    op.label = 0;
    (void)fwd;
    return op;
  }

 private:
  int add(Program& p, const StepContext& s, TimeNs d, OpPhase phase, const char* name) {
    OpSpec op;
    op.duration = d;
    op.host_ns = u_.host_ns;
    op.deps[0] = s.input_dep;
    op.microbatch = s.microbatch;
    op.chunk = static_cast<std::int16_t>(s.chunk);
    op.phase = phase;
    op.label = p.label(name);
    return p.add(op);
  }
  UnitPipeline u_;
};

inline Workload build_unit_pipeline(const UnitPipeline& u) {
  Workload w;
  w.sms = 100;
  w.init_ranks(u.pp);
  std::vector<int> ranks;
  for (int s = 0; s < u.pp; ++s) {
    Program p;
    p.label("P2P");
    UnitEmitter e(u);
    PipelineOptions opt;
    opt.p2p_device_sync = u.p2p_device_sync;
    opt.p2p_mode = u.p2p_mode;
    opt.combine_steady_steps = u.combine_steady_steps;
    emit_pipeline(p, pipeline_schedule(u.pp, u.vpp, u.microbatches, s, u.p2p_mode), u.vpp, u.microbatches, e,
                  opt);
    p.seal(kStreams);
    w.programs.push_back(std::move(p));
    w.rank_program[static_cast<std::size_t>(s)] = s;
    ranks.push_back(s);
  }
  w.add_pipeline_channels(ranks);
  return w;
}

}  // namespace moetwin::testing_support
