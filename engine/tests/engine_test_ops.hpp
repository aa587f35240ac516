// Builders the engine tests share: ops and one-rank workloads.
#pragma once

#include <cstdint>
#include <utility>

#include "moetwin/engine/program.hpp"

namespace moetwin::engine_test {

inline OpSpec compute(TimeNs d, std::int32_t host_ns = 0) {
  OpSpec op;
  op.duration = d;
  op.host_ns = host_ns;
  return op;
}

inline OpSpec comm(TimeNs d, ChannelKind ch, CommClass cls, std::uint8_t stream, std::uint16_t sms = 0) {
  OpSpec op;
  op.kind = OpKind::comm;
  op.duration = d;
  op.channel = ch;
  op.comm_class = cls;
  op.stream = stream;
  op.sms = sms;
  return op;
}

// One rank, one program on `streams` streams; TP and EP channels of that one member.
inline Workload single(Program p, int sms, int streams) {
  Workload w;
  w.sms = sms;
  p.seal(streams);
  w.programs.push_back(std::move(p));
  w.init_ranks(1);
  w.add_group_channels(ChannelKind::tp, {{0}});
  w.add_group_channels(ChannelKind::ep, {{0}});
  return w;
}

}  // namespace moetwin::engine_test
