// Compiled programs kept and shared between replays (compiled_program.hpp), and the engine's use of them.
#include "moetwin/engine/compiled_program.hpp"

#include <stdexcept>

#include "engine_internal.hpp"

namespace moetwin {

namespace {

// Whether `e` has `p`'s op count and per-stream op counts: then every record index computed from `p`'s
// streams and positions is inside `e` (what a compiled form can be checked against cheaply; the builder
// vouches for the rest, compiled_program.hpp).
bool fits(const engine_detail::EngineProgram& e, const Program& p) {
  return e.size == p.size() && e.stream_count == p.stream_sizes();
}

}  // namespace

using engine_detail::EngineOp;
using engine_detail::EngineProgram;
using engine_detail::SyncPoint;

std::shared_ptr<const CompiledProgram> compile_program(const Program& p) {
  if (!p.sealed()) throw std::logic_error("compile_program: program not sealed");
  auto c = std::make_shared<CompiledProgram>();
  c->program = engine_detail::compile(p);
  c->program.prog = nullptr;  // kept beyond `p`: each replay points its copy at its own program
  return c;
}

std::shared_ptr<const CompiledProgram> recompile_sms(const CompiledProgram& base, const Program& p,
                                                     const std::vector<std::int32_t>& ops) {
  if (!p.sealed()) throw std::logic_error("recompile_sms: program not sealed");
  const EngineProgram& b = base.program;
  if (!fits(b, p)) throw std::logic_error("recompile_sms: the base is another program's");
  auto c = std::make_shared<CompiledProgram>(base);
  EngineProgram& e = c->program;
  for (const std::int32_t i : ops) {
    if (i < 0 || i >= p.size()) throw std::logic_error("recompile_sms: op index out of range");
    const auto iu = static_cast<std::size_t>(i);
    const OpSpec& o = p.ops()[iu];
    // The op's record: where compile() puts it (its stream's block, at its position in the stream).
    EngineOp& r = e.ops[static_cast<std::size_t>(e.stream_begin[o.stream] + p.pos_in_stream()[iu])];
    if (r.index != i) throw std::logic_error("recompile_sms: the base is another program's");
    r.sms = o.sms;
  }
  return c;
}

bool same_compiled(const CompiledProgram& a, const CompiledProgram& b) {
  const EngineProgram& x = a.program;
  const EngineProgram& y = b.program;
  if (x.size != y.size || x.stream_mask != y.stream_mask || x.stream_begin != y.stream_begin ||
      x.stream_count != y.stream_count || x.drain != y.drain || x.ops.size() != y.ops.size() ||
      x.syncs.size() != y.syncs.size())
    return false;
  for (std::size_t k = 0; k < x.ops.size(); ++k) {
    const EngineOp& u = x.ops[k];
    const EngineOp& v = y.ops[k];
    if (u.issue_prefix != v.issue_prefix || u.dur != v.dur || u.index != v.index || u.dep[0] != v.dep[0] ||
        u.dep[1] != v.dep[1] || u.sms != v.sms || u.flags != v.flags || u.channel != v.channel)
      return false;
  }
  for (std::size_t k = 0; k < x.syncs.size(); ++k) {
    const SyncPoint& u = x.syncs[k];
    const SyncPoint& v = y.syncs[k];
    if (u.index != v.index || u.stream != v.stream || u.pos != v.pos || u.device != v.device ||
        u.issue_prefix != v.issue_prefix || u.drain != v.drain)
      return false;
  }
  return true;
}

std::size_t compiled_bytes(const CompiledProgram& c) {
  const EngineProgram& e = c.program;
  return sizeof(CompiledProgram) + e.ops.capacity() * sizeof(EngineOp) +
         e.syncs.capacity() * sizeof(SyncPoint) +
         (e.stream_begin.capacity() + e.stream_count.capacity() + e.drain.capacity()) * sizeof(std::int32_t);
}

namespace engine_detail {

EngineProgram compiled_for(const Workload& w, std::size_t p) {
  const Program& prog = w.programs[p];
  if (p >= w.compiled.size() || w.compiled[p] == nullptr) return compile(prog);
  EngineProgram e = w.compiled[p]->program;
  if (!fits(e, prog)) throw std::logic_error("engine: a workload's compiled program is another program's");
  e.prog = &prog;
  return e;
}

}  // namespace engine_detail

}  // namespace moetwin
