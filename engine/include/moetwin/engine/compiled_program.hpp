// A sealed Program compiled for the engine, kept and reused by replays of programs that compile alike.
//
// The engine compiles each program a replay runs into stream-ordered op records (engine.cpp: compile),
// once per replay. `plan` replays the same stage programs many times: a layout variant's dispatchers of
// one emission family and an option's band replays price one emitted template (sim/src/workload.cpp),
// and their priced programs differ only in the all-to-all ops' SMs and the flow-model loads, which the
// compiled form does not hold (the engine reads loads from the Program). A builder that knows two programs
// are alike in everything else keeps one compiled form and hands it to the engine with each workload
// (Workload::compiled), copied with those SMs set when they differ (recompile_sms): the engine then copies
// it instead of compiling (7.9% of plan at 32 nodes, docs/2026-12-04-plan-speed.md, session 43).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "moetwin/engine/program.hpp"

namespace moetwin {

class CompiledProgram;  // engine/src/engine_internal.hpp

// The compiled form of sealed `p` (what the engine would compile for it); logic_error if `p` is not sealed.
std::shared_ptr<const CompiledProgram> compile_program(const Program& p);

// The compiled form of sealed `p`, given `base`, the compiled form of a program equal to `p` in every
// op field except `sms` of the ops `ops` (program indices): `base` copied with those records' SMs set to
// `p`'s. Equal to compile_program(p) (engine/tests/program_test.cpp). logic_error if `base` has not `p`'s
// op count or an index is out of range.
std::shared_ptr<const CompiledProgram> recompile_sms(const CompiledProgram& base, const Program& p,
                                                     const std::vector<std::int32_t>& ops);

// Whether two compiled forms are equal record by record (everything the engine reads from them).
bool same_compiled(const CompiledProgram& a, const CompiledProgram& b);

// The bytes a compiled form holds (its record, sync and drain arrays).
std::size_t compiled_bytes(const CompiledProgram& c);

}  // namespace moetwin
