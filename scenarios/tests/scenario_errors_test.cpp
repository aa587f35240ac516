// Error paths of the scenario language and the live-run reader: one malformed input per rule, each with
// its exact full message ("file:line: key: value: expected ..."). The messages are the documentation a
// user sees, so they are pinned here word for word.
#include <gtest/gtest.h>

#include <stdexcept>

#include "moetwin/scenario/live_runs.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

// A valid scenario (the default live-run cell); every case breaks it in one place. Line numbers in the
// expected messages refer to this text.
const char* const kBase = R"(name = "t"
[model]
name = "deepseek-v3"
[cluster]
instance = "p6-b300.48xlarge"
nodes = 32
[parallelism]
tp = 8
pp = 8
ep = 32
dp = 4
[training]
micro_batch = 1
global_batch = 256
seq_length = 4096
recompute = "full"
[dispatcher]
name = "nccl-alltoall"
[routing]
kind = "balanced"
)";

// Replaces the one occurrence of `from` in `text` by `to`.
std::string edit(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos || text.find(from, at + 1) != std::string::npos) {
    throw std::logic_error("test bug: '" + from + "' must occur exactly once");
  }
  return text.replace(at, from.size(), to);
}

std::string base(const std::string& from, const std::string& to) {
  return edit(kBase, from, to);
}

struct Case {
  const char* name;
  std::string text;
  const char* expected;
};

std::vector<Case> toml_cases() {
  return {
      {"TomlSyntax", base("nodes = 32", "nodes = "),
       "bad.toml:6: TOML syntax error: Error while parsing key-value pair: expected value, saw '\\n'"},
      // toml++ 3.3 asserted on "[" followed by NUL (found by the fuzzer); control characters are rejected
      // first.
      {"NulInTableHeader", std::string("name = \"t\"\n[\0", 13),
       "bad.toml:2: TOML syntax error: control character 0 (only tab, LF and CR are allowed)"},
      // toml++ 3.3 asserted on a table header starting with a non-key character (found by the fuzzer).
      {"BacktickTableHeader", "[`",
       "bad.toml:1: TOML syntax error: Error while parsing key: expected bare key starting character or "
       "string "
       "delimiter, saw '`'"},
      // toml++ 3.3 reached __builtin_unreachable on some non-ASCII characters where whitespace may stand.
      {"NonAsciiOutsideStrings", base("nodes = 32", "nodes = 32 \u03d2"),
       "bad.toml:6: TOML syntax error: non-ASCII character outside a string or comment"},
      {"MisreadCharacterInString", base("name = \"t\"", "name = \"t\"\ndescription = \"K\u00f6nig\""),
       "bad.toml:2: unsupported character U+00F6 in a string (the TOML reader, toml++ 3.3, misreads "
       "U+00A1..U+0499 and U+FB26..U+FEFE; write it in ASCII)"},
      {"MisreadCharacterAfterMisplacedQuote", "i = 2\"\u0316",
       "bad.toml:1: unsupported character U+0316 in a string (the TOML reader, toml++ 3.3, misreads "
       "U+00A1..U+0499 and U+FB26..U+FEFE; write it in ASCII)"},
      {"UnknownTopLevelKey", base("name = \"t\"", "name = \"t\"\nnodes = 3"),
       "bad.toml:2: nodes: 3: no such key (unknown key; see the documentation of this file)"},
      {"MisspeltTable", base("[parallelism]", "[parallelsim]"),
       "bad.toml:7: parallelsim: a table: no such key (did you mean `parallelism`?)"},
      {"UnknownModelKey", base("name = \"deepseek-v3\"", "name = \"deepseek-v3\"\nlayer = 60"),
       "bad.toml:4: model.layer: 60: no such key (did you mean `layers`?)"},
      {"UnknownClusterKey", base("nodes = 32", "nodes = 32\nnode = 3"),
       "bad.toml:7: cluster.node: 3: no such key (did you mean `nodes`?)"},
      {"UnknownParallelismKey", base("dp = 4", "dp = 4\npipeline = 2"),
       "bad.toml:12: parallelism.pipeline: 2: no such key (unknown key; see the documentation of this file)"},
      {"UnknownTrainingKey", base("recompute = \"full\"", "recompute = \"full\"\nfp8 = true"),
       "bad.toml:17: training.fp8: true: no such key (unknown key; see the documentation of this file)"},
      {"UnknownDispatcherKey", base("name = \"nccl-alltoall\"", "name = \"nccl-alltoall\"\nmode = \"ll\""),
       "bad.toml:19: dispatcher.mode: \"ll\": no such key (unknown key; see the documentation of this file)"},
      {"UnknownRoutingKey", base("kind = \"balanced\"", "kind = \"balanced\"\nexponent = 1.2"),
       "bad.toml:21: routing.exponent: 1.2: no such key (unknown key; see the documentation of this file)"},
      // Megatron-Bridge's flex-backend gate: DeepEP is not run on GB200/GB300 (it falls back to alltoall).
      {"DeepepOnGraceBlackwell",
       edit(edit(edit(edit(kBase, "p6-b300.48xlarge", "p6e-gb200.36xlarge"), "tp = 8", "tp = 4"), "ep = 32",
                 "ep = 16"),
            "nccl-alltoall", "deepep-uccl"),
       "bad.toml:18: dispatcher.name: \"deepep-uccl\": a dispatcher that runs on p6e-gb200.36xlarge: "
       "Megatron-Bridge runs the flex backend \"deepep\" only on compute capability 8.x/9.x and on the "
       "discrete "
       "B200/B300; on GB200 (10.0, a Grace superchip GPU) it falls back to the alltoall dispatcher "
       "(flex_dispatcher_backend.py): choose nccl-alltoall (NVIDIA's recipes run hybridep there, on "
       "InfiniBand)"},
      // A transport on a fabric it has no path on: IBGDA needs ConnectX NICs.
      {"IbgdaOnEfa", base("nccl-alltoall", "deepep-ibgda"),
       "bad.toml:18: dispatcher.name: \"deepep-ibgda\": a dispatcher that runs on p6-b300.48xlarge: "
       "deepep-ibgda runs on infiniband only; p6-b300.48xlarge is on efa (DeepEP v1 normal kernels over "
       "NVSHMEM "
       "IBGDA on InfiniBand: the GPU posts RDMA writes, no CPU proxy)"},
      {"UnknownCalibrationKey", std::string(kBase) + "[calibration]\nfile = \"x.h5\"\n",
       "bad.toml:22: calibration.file: \"x.h5\": no such key (unknown key; see the documentation of this "
       "file)"},
      {"MissingTable",
       edit(base("[training]", ""),
            "micro_batch = 1\nglobal_batch = 256\nseq_length = 4096\nrecompute = \"full\"\n", ""),
       "bad.toml:1: training: missing: a [training] table (required)"},
      // A misspelt key is reported at its own line with the key it was meant to be.
      {"MisspeltRequiredKey", base("micro_batch = 1", "micro_bach = 1"),
       "bad.toml:13: training.micro_bach: 1: no such key (did you mean `micro_batch`? training.micro_batch "
       "is "
       "required)"},
      {"MisspeltOptionalKey", base("dp = 4", "dp = 4\nvp = 2"),
       "bad.toml:12: parallelism.vp: 2: no such key (did you mean `vpp`?)"},
      {"MissingKey", base("micro_batch = 1\n", ""),
       "bad.toml:12: training.micro_batch: missing: a value (required key)"},
      {"TableIsAString", base("[model]\nname = \"deepseek-v3\"", "model = \"deepseek-v3\""),
       "bad.toml:2: model: \"deepseek-v3\": a table"},
      {"WrongTypeString", base("tp = 8", "tp = \"8\""), "bad.toml:8: parallelism.tp: \"8\": an integer"},
      {"WrongTypeFloatForInteger", base("tp = 8", "tp = 8.0"), "bad.toml:8: parallelism.tp: 8: an integer"},
      {"WrongTypeBoolean", base("recompute = \"full\"", "recompute = \"full\"\nbf16 = 1"),
       "bad.toml:17: training.bf16: 1: true or false"},
      {"TpCommOverlapNotABoolean",
       base("recompute = \"full\"", "recompute = \"full\"\ntp_comm_overlap = \"on\""),
       "bad.toml:17: training.tp_comm_overlap: \"on\": true or false"},
      {"TpCommOverlapAtTp1",
       edit(edit(base("recompute = \"full\"", "recompute = \"full\"\ntp_comm_overlap = true"), "tp = 8",
                 "tp = 1"),
            "dp = 4", "dp = 32"),
       "bad.toml:17: training.tp_comm_overlap: true: false when tp = 1 (TP communication overlap pipelines "
       "the "
       "sequence-parallel all-gathers and reduce-scatters of tp > 1 with their GEMMs; tp = 1 has none)"},
      // overlap_p2p_comm: a switch that may defer to the stack ("auto"); nothing else.
      {"OverlapP2pCommOtherString",
       base("recompute = \"full\"", "recompute = \"full\"\noverlap_p2p_comm = \"on\""),
       "bad.toml:17: training.overlap_p2p_comm: \"on\": true, false or \"auto\""},
      {"OverlapP2pCommInteger", base("recompute = \"full\"", "recompute = \"full\"\noverlap_p2p_comm = 1"),
       "bad.toml:17: training.overlap_p2p_comm: 1: true, false or \"auto\""},
      {"OverlapP2pCommMisspelt", base("recompute = \"full\"", "recompute = \"full\"\noverlap_p2p_com = true"),
       "bad.toml:17: training.overlap_p2p_com: true: no such key (did you mean `overlap_p2p_comm`?)"},
      {"OutOfRange", base("nodes = 32", "nodes = 0"),
       "bad.toml:6: cluster.nodes: 0: an integer in [1, 100000]"},
      {"EmptyName", base("name = \"t\"", "name = \"\""),
       "bad.toml:1: name: \"\": a non-empty name (or no name key)"},
      {"NegativeSeed", base("kind = \"balanced\"", "kind = \"balanced\"\nseed = -1"),
       "bad.toml:21: routing.seed: -1: an integer in [0, 9223372036854775807]"},
      {"UnknownModel", base("name = \"deepseek-v3\"", "name = \"deepseek-v4\""),
       "bad.toml:3: model.name: \"deepseek-v4\": one of deepseek-v2, deepseek-v2-lite, deepseek-v3, "
       "glm-4.5, glm-4.5-air, gpt-oss-120b, gpt-oss-20b, kimi-k2, llama3-70b, llama3-8b, llama3.1-405b, "
       "mixtral-8x22b, mixtral-8x7b, "
       "qwen3-235b-a22b, qwen3-30b-a3b, "
       "qwen3-coder-480b-a35b, uccl-dsv3-proxy"},
      {"UnknownStack", std::string(kBase) + "[stack]\nname = \"nemo-99\"\n",
       "bad.toml:22: stack.name: \"nemo-99\": one of megatron-lm-core_r0.17.0-nccl2.28.9, nemo-26.04.01, "
       "nemo-26.08"},
      {"UnknownStackKnob", std::string(kBase) + "[stack]\nname = \"nemo-26.04.01\"\nnccl_nchannels = 8\n",
       "bad.toml:23: stack.nccl_nchannels: 8: no such key (unknown key; see the documentation of this file)"},
      {"StackKnobOutOfRange",
       std::string(kBase) + "[stack]\nname = \"nemo-26.04.01\"\nnccl_max_nchannels = 128\n",
       "bad.toml:23: stack.nccl_max_nchannels: 128: an integer in [1, 64]"},
      {"StackChunkOutOfRange",
       std::string(kBase) + "[stack]\nname = \"nemo-26.04.01\"\nnccl_p2p_net_chunksize_kib = 1\n",
       "bad.toml:23: stack.nccl_p2p_net_chunksize_kib: 1: a number in [4, 16384]"},
      {"UnknownPrecision", base("recompute = \"full\"", "recompute = \"full\"\nprecision = \"fp4\""),
       "bad.toml:17: training.precision: \"fp4\": one of bf16, fp8-hybrid, fp8-current, fp8-blockwise, "
       "mxfp8, nvfp4"},
      {"Nvfp4OnHopper",
       edit(base("recompute = \"full\"", "recompute = \"full\"\nprecision = \"nvfp4\""),
            "instance = \"p6-b300.48xlarge\"", "instance = \"p5en.48xlarge\""),
       "bad.toml:17: training.precision: \"nvfp4\": a recipe H200-SXM can run (NVFP4 needs FP4 tensor cores: "
       "Blackwell B200, B300, GB200, GB300): bf16 or an FP8 recipe"},
      {"Mxfp8OnHopper",
       edit(base("recompute = \"full\"", "recompute = \"full\"\nprecision = \"mxfp8\""),
            "instance = \"p6-b300.48xlarge\"", "instance = \"p5en.48xlarge\""),
       "bad.toml:17: training.precision: \"mxfp8\": a recipe H200-SXM can run (MXFP8 block scaling needs "
       "Blackwell tensor cores): bf16, fp8-hybrid, fp8-current or fp8-blockwise"},
      {"UnknownInstance", base("instance = \"p6-b300.48xlarge\"", "instance = \"p6-b300\""),
       "bad.toml:5: cluster.instance: \"p6-b300\": one of deepep-testbed-h800, dgx-b200, dgx-b300, "
       "dgx-gb200, dgx-gb300, "
       "dgx-h100, "
       "p5.48xlarge, p5e.48xlarge, p5en.48xlarge, p6-b200.48xlarge, p6-b300.48xlarge, p6e-gb200.36xlarge"},
      {"UnknownDispatcher", base("name = \"nccl-alltoall\"", "name = \"deepep\""),
       "bad.toml:18: dispatcher.name: \"deepep\": one of deepep-ibgda, deepep-nvshmem, deepep-uccl, "
       "deepep-v2-gin, "
       "hybridep, nccl-alltoall"},
      {"UnknownRecompute", base("recompute = \"full\"", "recompute = \"block\""),
       "bad.toml:16: training.recompute: \"block\": one of none, selective, full"},
      {"UnknownRoutingKind", base("kind = \"balanced\"", "kind = \"uniform\""),
       "bad.toml:20: routing.kind: \"uniform\": one of balanced, zipf, group-limited, histogram"},
      {"GqaKeyOnMlaModel", base("name = \"deepseek-v3\"", "name = \"deepseek-v3\"\nquery_groups = 8"),
       "bad.toml:4: model.query_groups: 8: a key of GQA models only (deepseek-v3 uses mla attention)"},
      {"DenseLayersAboveLayers", base("name = \"deepseek-v3\"", "name = \"deepseek-v3\"\ndense_layers = 62"),
       "bad.toml:4: model.dense_layers: 62: in [0, layers = 61]"},
      {"TopKAboveExperts", base("name = \"deepseek-v3\"", "name = \"deepseek-v3\"\ntop_k = 300"),
       "bad.toml:4: model.top_k: 300: in [1, experts = 256]"},
      {"TopKGroupsAboveGroups",
       base("name = \"deepseek-v3\"", "name = \"deepseek-v3\"\nrouter_topk_groups = 9"),
       "bad.toml:4: model.router_topk_groups: 9: in [1, router_groups = 8]"},
      {"WorldSize", base("dp = 4", "dp = 3"),
       "bad.toml:11: parallelism.dp: 3: tp * cp * dp * pp = 8 * 1 * 3 * 8 = 192 equal to the world size, "
       "nodes * GPUs per node = 32 * 8 = 256"},
      {"DpNotDerivable", edit(base("dp = 4\n", ""), "nodes = 32", "nodes = 3"),
       "bad.toml:7: parallelism.dp: absent: derivable as world / (tp * cp * pp), but the world size 24 (3 "
       "nodes * 8 GPUs) is not a multiple of tp * cp * pp = 64"},
      {"TpAcrossNodes", edit(base("tp = 8", "tp = 16"), "dp = 4", "dp = 2"),
       "bad.toml:8: parallelism.tp: 16: a divisor of the 8 GPUs per p6-b300.48xlarge node (tensor "
       "parallelism stays inside one node's NVLink domain)"},
      {"HeadsVsTp", base("name = \"deepseek-v3\"", "name = \"deepseek-v3\"\nheads = 100"),
       "bad.toml:9: parallelism.tp: 8: a divisor of heads = 100"},
      {"QueryGroupsVsTp",
       "[model]\nname = \"qwen3-30b-a3b\"\nheads = 48\nquery_groups = 6\n[cluster]\ninstance = "
       "\"p5.48xlarge\"\n"
       "nodes = 1\n[parallelism]\ntp = 4\npp = 1\nep = 2\n[training]\nmicro_batch = 1\nglobal_batch = 8\n"
       "seq_length = 4096\n",
       "bad.toml:9: parallelism.tp: 4: a divisor or a multiple of query_groups = 6 (each TP rank holds whole "
       "KV groups, or one group replicated)"},
      {"EpCarving", base("ep = 32", "ep = 64"),
       "bad.toml:10: parallelism.ep: 64: ep * etp = 64 * 1 dividing tp * cp * dp = 8 * 1 * 4 = 32 "
       "(Megatron-Core carves ep * etp * edp = tp * cp * dp from the ranks of a pipeline stage)"},
      {"ExpertsVsEp", base("name = \"deepseek-v3\"", "name = \"deepseek-v3\"\nexperts = 80"),
       "bad.toml:11: parallelism.ep: 32: a divisor of experts = 80"},
      {"ExpertFfnVsEtp",
       edit(edit(base("name = \"deepseek-v3\"", "name = \"deepseek-v3\"\nexpert_ffn_hidden = 2049"),
                 "ep = 32", "ep = 16"),
            "dp = 4", "dp = 4\netp = 2"),
       "bad.toml:13: parallelism.etp: 2: a divisor of expert_ffn_hidden = 2049"},
      {"DenseModelWithEp", base("name = \"deepseek-v3\"", "name = \"deepseek-v3\"\nexperts = 0"),
       "bad.toml:11: parallelism.ep: 32: 1 for a dense model (deepseek-v3 has no experts)"},
      {"VppWithoutPp", edit(base("pp = 8", "pp = 1\nvpp = 2"), "dp = 4", "dp = 32"),
       "bad.toml:10: parallelism.vpp: 2: 1 when pp = 1 (virtual pipeline chunks need pipeline parallelism)"},
      {"LayersVsPipeline",
       base("name = \"deepseek-v3\"", "name = \"deepseek-v3\"\nlayers = 9\ndense_layers = 1"),
       "bad.toml:4: model.layers: 9: a layer count that splits over pp * vpp = 8 * 1 = 8 chunks: a multiple "
       "of 8 (even), or 8 * n - 2 (embedding and loss accounted), or ceil(9 / 8) = 2 per chunk leaving >= 1 "
       "for the last (DeepSeek recipe; it leaves -5)"},
      {"GlobalBatchVsMicroBatchTimesDp", base("global_batch = 256", "global_batch = 250"),
       "bad.toml:14: training.global_batch: 250: a multiple of micro_batch * dp = 1 * 4 = 4"},
      {"InterleavedMicrobatchesVsPp",
       edit(edit(base("pp = 8", "pp = 8\nvpp = 2"), "micro_batch = 1", "micro_batch = 4"),
            "global_batch = 256", "global_batch = 96"),
       "bad.toml:15: training.global_batch: 96: global_batch / (micro_batch * dp) = 6 microbatches, a "
       "multiple of pp = 8 (Megatron's interleaved schedule with vpp = 2)"},
      {"SequenceParallelSeq", base("seq_length = 4096", "seq_length = 4100"),
       "bad.toml:15: training.seq_length: 4100: a multiple of tp * cp = 8 * 1 (sequence parallelism splits "
       "each sequence over the tp * cp ranks)"},
      {"ContextParallelSeq",
       edit(edit(base("tp = 8", "tp = 1\ncp = 2"), "dp = 4", "dp = 16"), "seq_length = 4096",
            "seq_length = 4098"),
       "bad.toml:16: training.seq_length: 4098: a multiple of 2 * cp = 4 (context parallelism cuts each "
       "sequence into 2 * cp load-balanced chunks)"},
      {"OverlapWithoutVpp", base("recompute = \"full\"", "recompute = \"none\"\noverlap_moe_a2a = true"),
       "bad.toml:17: training.overlap_moe_a2a: true: false unless vpp >= 2 or pp = 1 (with a pipeline the EP "
       "all-to-all overlap runs in the interleaved 1F1B schedule; pp = 8, vpp = 1)"},
      {"OverlapWithoutEp",
       edit(edit(base("recompute = \"full\"", "recompute = \"none\"\noverlap_moe_a2a = true"), "ep = 32",
                 "ep = 1"),
            "pp = 8", "pp = 8\nvpp = 2"),
       "bad.toml:18: training.overlap_moe_a2a: true: false when ep = 1 (Megatron asserts "
       "expert_model_parallel_size > 1 for overlap_moe_expert_parallel_comm)"},
      {"OverlapWithFullRecompute",
       edit(base("recompute = \"full\"", "recompute = \"full\"\noverlap_moe_a2a = true"), "pp = 8",
            "pp = 8\nvpp = 2"),
       "bad.toml:17: training.recompute: \"full\": none or selective when overlap_moe_a2a is on (Megatron "
       "asserts recompute_granularity != full for overlap_moe_expert_parallel_comm)"},
      {"NvshmemRankCap",
       edit(edit(edit(base("pp = 8", "pp = 1"), "dp = 4", "dp = 32"), "ep = 32", "ep = 256"),
            "name = \"nccl-alltoall\"", "name = \"deepep-nvshmem\""),
       "bad.toml:18: dispatcher.name: \"deepep-nvshmem\": a dispatcher whose normal kernels reach ep = 256 "
       "ranks (deepep-nvshmem normal mode caps at 160 EP ranks)"},
      {"ZipfWithoutExponent", base("kind = \"balanced\"", "kind = \"zipf\""),
       "bad.toml:19: routing.zipf_exponent: missing: a number in (0, 5] (required for kind = \"zipf\")"},
      {"ZipfExponentOutOfRange", base("kind = \"balanced\"", "kind = \"zipf\"\nzipf_exponent = 6"),
       "bad.toml:21: routing.zipf_exponent: 6: a number in (0, 5]"},
      {"ZipfExponentWithBalanced", base("kind = \"balanced\"", "kind = \"balanced\"\nzipf_exponent = 1.2"),
       "bad.toml:21: routing.zipf_exponent: 1.2: only with kind = \"zipf\""},
      {"HistogramWithoutFile", base("kind = \"balanced\"", "kind = \"histogram\""),
       "bad.toml:19: routing.histogram: missing: the path of a file of measured expert loads (required for "
       "kind = \"histogram\")"},
      {"MissingHistogramFile", base("kind = \"balanced\"", "kind = \"histogram\"\nhistogram = \"nope.csv\""),
       "bad.toml:21: routing.histogram: \"nope.csv\": an existing file, relative to the scenario file "
       "(looked for nope.csv)"},
      {"GroupLimitedWithoutGroups",
       "[model]\nname = \"qwen3-30b-a3b\"\n[cluster]\ninstance = \"p5.48xlarge\"\nnodes = "
       "1\n[parallelism]\ntp = 1\n"
       "pp = 1\nep = 8\n[training]\nmicro_batch = 1\nglobal_batch = 8\nseq_length = 4096\n[routing]\n"
       "kind = \"group-limited\"\n",
       "bad.toml:15: routing.kind: \"group-limited\": balanced, zipf or histogram for qwen3-30b-a3b (it has "
       "no router_groups)"},
  };
}

std::string case_name(const ::testing::TestParamInfo<Case>& param) {
  return param.param.name;
}

class TomlErrors : public ::testing::TestWithParam<Case> {};

TEST_P(TomlErrors, ExactMessage) {
  const Case& c = GetParam();
  try {
    parse_scenario(c.text, "bad.toml", catalog());
    FAIL() << "no error for:\n" << c.text;
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), c.expected);
  }
}

INSTANTIATE_TEST_SUITE_P(Scenario, TomlErrors, ::testing::ValuesIn(toml_cases()), case_name);

const char* const kHeader =
    "campaign,model,instance,nodes,gpus,tp,pp,vpp,ep,etp,dp,mb,gbs,seq,layers,recompute,overlap,dispatcher,"
    "iter_s,"
    "tflops_gpu,source\n";
const char* const kRow =
    "c1,deepseek-v3,p6-b300.48xlarge,32,256,8,8,1,32,1,4,1,256,4096,61,full,off,nccl-alltoall,12.538,85.1,"
    "src\n";

std::string row(const std::string& from, const std::string& to) {
  return std::string(kHeader) + edit(kRow, from, to);
}

std::vector<Case> csv_cases() {
  return {
      {"RaggedRow", row(",src\n", "\n"), "runs.csv:2: row: 20 fields: 21 fields as in the header"},
      {"UnterminatedQuote", row(",src\n", ",\"src\n"), "runs.csv:2: unterminated quoted field"},
      {"BadInteger", row(",8,8,1,32,", ",x8,8,1,32,"), "runs.csv:2: tp: x8: an integer in [1, 1048576]"},
      {"EmptyInteger", row(",32,256,", ",,256,"), "runs.csv:2: nodes: \"\": an integer in [1, 100000]"},
      {"BadNumber", row(",12.538,", ",nan,"),
       "runs.csv:2: iter_s: nan: a positive number of seconds (mean iteration time)"},
      {"NegativeNumber", row(",85.1,", ",-1,"),
       "runs.csv:2: tflops_gpu: -1: a number >= 0 (logged model TFLOP/s per GPU)"},
      {"UnknownRecompute", row(",full,", ",block,"),
       "runs.csv:2: recompute: block: one of none, selective, full"},
      {"UnknownOverlap", row(",off,", ",yes,"), "runs.csv:2: overlap: yes: one of on, off"},
      {"UnknownModel", row(",deepseek-v3,", ",deepseek-v4,"),
       "runs.csv:2: model: deepseek-v4: one of deepseek-v2, deepseek-v2-lite, deepseek-v3, glm-4.5, "
       "glm-4.5-air, gpt-oss-120b, gpt-oss-20b, kimi-k2, llama3-70b, llama3-8b, llama3.1-405b, "
       "mixtral-8x22b, mixtral-8x7b, "
       "qwen3-235b-a22b, qwen3-30b-a3b, qwen3-coder-480b-a35b, uccl-dsv3-proxy"},
      {"UnknownDispatcher", row(",nccl-alltoall,", ",nccl,"),
       "runs.csv:2: dispatcher: nccl: one of deepep-ibgda, deepep-nvshmem, deepep-uccl, deepep-v2-gin, "
       "hybridep, nccl-alltoall"},
      {"GpusColumnMismatch", row(",32,256,", ",32,255,"),
       "runs.csv:2: gpus: 255: nodes * GPUs per node = 32 * 8 = 256 (p6-b300.48xlarge)"},
      {"EmptyCampaign", row("c1,", ","), "runs.csv:2: campaign: \"\": a non-empty campaign name"},
      {"MissingColumn", edit(edit(std::string(kHeader) + kRow, "seq,", ""), ",4096,", ","),
       "runs.csv:1: header: seq: a column named 'seq' (missing)"},
      {"UnknownColumn", edit(std::string(kHeader) + kRow, "source\n", "tok_s\n"),
       "runs.csv: header: tok_s: a live-run column: one of campaign, model, instance, nodes, gpus, tp, pp, "
       "vpp, ep, etp, dp, mb, gbs, seq, layers, recompute, overlap, dispatcher, iter_s, tflops_gpu, cp, "
       "source, seed, precision, stack, nccl_max_nchannels, cuda_graphs, fsdp, cpu_offload_layers"},
      {"WorldSizeNotRepairable",
       std::string(kHeader) + "kimik2-b300-16n-20260604,kimi-k2,p6-b300.48xlarge,16,128,8,3,2,32,1,2,4,256,"
                              "4096,61,none,on,deepep-uccl,"
                              "6.420,261.3,src\n",
       "runs.csv:2: dp: 2: tp * cp * dp * pp = 8 * 1 * 2 * 3 = 48 equal to the world size, nodes * GPUs per "
       "node = 16 * 8 = 128"},
      {"LayersColumnVsPipeline", row(",4096,61,", ",4096,7,"),
       "runs.csv:2: layers: 7: a layer count that splits over pp * vpp = 8 * 1 = 8 chunks: a multiple of 8 "
       "(even), or 8 * n - 2 (embedding and loss accounted), or ceil(7 / 8) = 1 per chunk leaving >= 1 for "
       "the last (DeepSeek recipe; it leaves 0)"},
      {"OverlapWithoutVpp", row(",full,off,", ",none,on,"),
       "runs.csv:2: overlap: on: off unless vpp >= 2 or pp = 1 (with a pipeline the EP all-to-all overlap "
       "runs in the interleaved 1F1B schedule; pp = 8, vpp = 1)"},
  };
}

class CsvErrors : public ::testing::TestWithParam<Case> {};

TEST_P(CsvErrors, ExactMessage) {
  const Case& c = GetParam();
  try {
    parse_live_runs(parse_csv(c.text, "runs.csv"), catalog());
    FAIL() << "no error for:\n" << c.text;
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), c.expected);
  }
}

INSTANTIATE_TEST_SUITE_P(LiveRuns, CsvErrors, ::testing::ValuesIn(csv_cases()), case_name);

}  // namespace
}  // namespace moetwin
