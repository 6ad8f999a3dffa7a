#!/usr/bin/env python3
# Tests of app/profiler/hapmoe_profile.py that need neither torch nor an accelerator: the pure
# logic against hand-computed values, its one-line argument errors (exit code 2), and profiles
# assembled from given measured numbers against the real command line (hapmoe validate,
# hapmoe estimate --profile).
#
#   python3 test_hapmoe_profile.py --hapmoe build/app/cli/hapmoe [--script app/profiler/hapmoe_profile.py]
#
# ctest runs it (tests/profiler/CMakeLists.txt).

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SOURCE_DIR = Path(__file__).resolve().parents[2]
HAPMOE = None                 # the hapmoe executable, from --hapmoe
SCRIPT = SOURCE_DIR / "app" / "profiler" / "hapmoe_profile.py"
prof = None                   # the module under test, loaded in main()

MiB = 1 << 20
GiB = 1 << 30


def load_script(path):
    sys.dont_write_bytecode = True   # leave no __pycache__ in the source tree
    spec = importlib.util.spec_from_file_location("hapmoe_profile", str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules["hapmoe_profile"] = module   # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def launch_env(world=None, local_world=None):
    """The environment of a subprocess: torchrun's variables removed or set as given."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                        "GROUP_RANK")}
    if world is not None:
        env["WORLD_SIZE"] = str(world)
        env["LOCAL_WORLD_SIZE"] = str(local_world if local_world is not None else world)
    return env


def model_doc(**fields):
    """A hapmoe.model (version 2) with LLaMA-2 7B's shape, fields replaced or removed (None)."""
    doc = {"format": "hapmoe.model", "version": 2, "name": "test", "num_layers": 32, "hidden_size": 4096,
           "ffn_hidden_size": 11008, "num_attention_heads": 32, "num_query_groups": 0, "kv_channels": 0,
           "vocab_size": 32000, "seq_length": 4096, "swiglu": True, "add_bias_linear": False,
           "normalization": "RMSNorm"}
    for k, v in fields.items():
        if v is None:
            doc.pop(k, None)
        else:
            doc[k] = v
    return doc


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="hapmoe-profiler-test-")
        self.dir = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, name, doc):
        path = self.dir / name
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
        return str(path)


class NoTorch(unittest.TestCase):
    def test_module_imports_without_torch(self):
        # The pure logic must run where torch is absent (CI); measure() alone imports it.
        self.assertNotIn("torch", sys.modules)


class ModelReading(TempDirTest):
    def test_llama2_7b_preset(self):
        # resources/models/llama2-7b.json (Touvron et al. 2023, Table 1; config.json).
        m = prof.read_model("LLaMA-2-7B")
        self.assertEqual((m.hidden_size, m.ffn_hidden_size, m.num_attention_heads), (4096, 11008, 32))
        self.assertEqual(m.num_query_groups, 32)      # 0 in the file: multi-head attention
        self.assertEqual(m.kv_channels, 128)          # 0 in the file: 4096 / 32
        self.assertEqual((m.seq_length, m.swiglu, m.normalization, m.precision), (4096, True, "RMSNorm", "bf16"))
        self.assertFalse(m.add_bias_linear)

    def test_preset_names_ignore_case_and_separators(self):
        self.assertEqual(prof.read_model("mixtral_s").name, "Mixtral-S")

    def test_default_ffn_size(self):
        # docs/formats.md: 4h, or int(4h * 2/3 / 64) * 64 with SwiGLU (Megatron-LM's default).
        # h = 4096 with SwiGLU: 4 * 4096 * 2/3 = 10922.67; / 64 = 170.67 -> 170 * 64 = 10880.
        self.assertEqual(prof.default_ffn_hidden_size(4096, True), 10880)
        # h = 5120 with SwiGLU: 13653.33 / 64 = 213.33 -> 213 * 64 = 13632.
        self.assertEqual(prof.default_ffn_hidden_size(5120, True), 13632)
        self.assertEqual(prof.default_ffn_hidden_size(4096, False), 16384)
        path = self.write("m.json", model_doc(ffn_hidden_size=None))
        self.assertEqual(prof.read_model(path).ffn_hidden_size, 10880)
        path = self.write("gelu.json", model_doc(ffn_hidden_size=None, swiglu=False))
        self.assertEqual(prof.read_model(path).ffn_hidden_size, 16384)

    def test_integers_and_enumerations(self):
        # "8.0" reads as 8; enumerations ignore case, '-', '_' and spaces (docs/formats.md).
        m = prof.read_model(self.write("m.json", model_doc(hidden_size=4096.0, normalization="layer_norm")))
        self.assertEqual((m.hidden_size, m.normalization), (4096, "LayerNorm"))
        m = prof.read_model(self.write("g.json", model_doc(num_query_groups=8, training={"precision": "FP16"})))
        self.assertEqual((m.num_query_groups, m.precision), (8, "fp16"))

    def test_version_1_precision(self):
        doc = model_doc(version=1)
        doc["fp16"] = True
        self.assertEqual(prof.read_model(self.write("v1.json", doc)).precision, "fp16")

    def assertInputError(self, fn, *fragments):
        with self.assertRaises(prof.InputError) as ctx:
            fn()
        message = str(ctx.exception)
        for f in fragments:
            self.assertIn(f, message)
        self.assertNotIn("\n", message)
        return message

    def test_bad_fields_are_named(self):
        path = self.write("neg.json", model_doc(hidden_size=-8))
        self.assertEqual(self.assertInputError(lambda: prof.read_model(path)),
                         f"{path}: model.hidden_size: expected a positive integer, got -8")
        path = self.write("half.json", model_doc(num_attention_heads=8.5))
        self.assertInputError(lambda: prof.read_model(path), "model.num_attention_heads", "8.5")
        path = self.write("str.json", model_doc(seq_length="4096"))
        self.assertInputError(lambda: prof.read_model(path), "model.seq_length", '"4096"')
        path = self.write("bool.json", model_doc(swiglu=1))
        self.assertInputError(lambda: prof.read_model(path), "model.swiglu", "true or false")
        path = self.write("missing.json", model_doc(hidden_size=None))
        self.assertInputError(lambda: prof.read_model(path), "model.hidden_size: missing required key")
        path = self.write("norm.json", model_doc(normalization="BatchNorm"))
        self.assertInputError(lambda: prof.read_model(path), "model.normalization", '"RMSNorm" or "LayerNorm"')
        path = self.write("groups.json", model_doc(num_query_groups=5))
        self.assertInputError(lambda: prof.read_model(path), "model.num_query_groups", "32 attention heads")
        path = self.write("heads.json", model_doc(num_attention_heads=24, hidden_size=4100))
        self.assertInputError(lambda: prof.read_model(path), "model.hidden_size", "kv_channels")

    def test_other_formats_and_versions_are_refused(self):
        cluster = str(SOURCE_DIR / "tests" / "data" / "foundation" / "cluster-v1.json")
        self.assertInputError(lambda: prof.read_model(cluster), "format", 'expected "hapmoe.model"',
                              '"hapmoe.cluster"')
        path = self.write("v3.json", model_doc(version=3))
        self.assertInputError(lambda: prof.read_model(path), "version", "version 3", "reads up to 2")
        path = self.write("noformat.json", model_doc(format=None))
        self.assertInputError(lambda: prof.read_model(path), "format: missing required key")
        path = self.write("dup.json", '{"format": "hapmoe.model", "version": 2, "version": 2}')
        self.assertInputError(lambda: prof.read_model(path), "appears twice")
        path = self.write("broken.json", '{"format": "hapmoe.model",\n "version": }')
        self.assertInputError(lambda: prof.read_model(path), "line 2, column", "malformed JSON")
        self.assertInputError(lambda: prof.read_model(str(self.dir / "none.json")), "--model", "no such file")
        self.assertInputError(lambda: prof.read_model("No-Such-Preset"), "--model", "not a model preset name")


class ShardShapes(unittest.TestCase):
    def test_llama2_7b_tp2(self):
        # LLaMA-2 7B (resources/models/llama2-7b.json): h 4096, 32 heads of 128 channels, MHA,
        # F 11008 with SwiGLU. Per rank at TP 2 (Megatron-Core stores weights [out, in]):
        #   QKV  (32/2 + 2 x 32/2) x 128 = 6144 rows of 4096
        #   proj 4096 x (16 x 128 = 2048)
        #   FC1  2 x 11008 / 2 = 11008 rows of 4096 (gate and up)
        #   FC2  4096 x 11008/2 = 5504
        s = prof.layer_shards(prof.read_model("LLaMA-2-7B"), 2)
        self.assertEqual(s.qkv_weight, (6144, 4096))
        self.assertEqual(s.proj_weight, (4096, 2048))
        self.assertEqual(s.fc1_weight, (11008, 4096))
        self.assertEqual(s.fc2_weight, (4096, 5504))
        self.assertEqual((s.query_heads, s.kv_groups, s.qkv_gathered), (16, 16, False))
        # 6144*4096 + 4096*2048 + 11008*4096 + 4096*5504 = 25,165,824 + 8,388,608 + 45,088,768
        # + 22,544,384 = 101,187,584 per rank; both ranks hold 4h^2 + 3hF = 202,375,168.
        self.assertEqual(s.linear_weight_elements(), 101_187_584)
        self.assertEqual(2 * s.linear_weight_elements(), 4 * 4096 ** 2 + 3 * 4096 * 11008)
        # With two RMSNorms (2h) per layer, 32 layers, untied embedding and output (2 V h) and the
        # final norm this is the 6,738,415,616 of docs/cost-model.md section 1 (published 6.74e9).
        layer = 2 * s.linear_weight_elements() + 2 * s.norm_weight
        self.assertEqual(32 * layer + 2 * 32000 * 4096 + 4096, 6_738_415_616)

    def test_mixtral_s_tp2(self):
        # Mixtral-S (resources/models/mixtral-s.json, HAPMoE paper appendix A): h 4096, 32 heads,
        # 8 query groups, 128 channels, dense F 14336 with SwiGLU. At TP 2: 16 query heads and
        # 4 groups per rank, QKV (16 + 2 x 4) x 128 = 3072 rows; FC1 2 x 14336 / 2 = 14336 rows;
        # FC2 14336 / 2 = 7168 columns.
        s = prof.layer_shards(prof.read_model("Mixtral-S"), 2)
        self.assertEqual(s.qkv_weight, (3072, 4096))
        self.assertEqual(s.proj_weight, (4096, 2048))
        self.assertEqual(s.fc1_weight, (14336, 4096))
        self.assertEqual(s.fc2_weight, (4096, 7168))
        self.assertEqual((s.query_heads, s.kv_groups), (16, 4))

    def test_fewer_query_groups_than_tp(self):
        # Qwen3-235B-A22B (resources/models/qwen3-235b-a22b.json): 64 heads, 4 query groups, 128
        # channels, h 4096, dense F 12288. At TP 8 Megatron-Core splits the (64 + 2 x 4) x 128 = 9216
        # QKV outputs over 8 ranks (1152 each) and all-gathers them; each rank keeps one group and
        # 64/8 = 8 query heads, so the projection is 4096 x (8 x 128 = 1024).
        s = prof.layer_shards(prof.read_model("Qwen3-235B-A22B"), 8)
        self.assertTrue(s.qkv_gathered)
        self.assertEqual(s.qkv_weight, (1152, 4096))
        self.assertEqual((s.query_heads, s.kv_groups), (8, 1))
        self.assertEqual(s.proj_weight, (4096, 1024))
        self.assertEqual(s.fc1_weight, (3072, 4096))
        self.assertEqual(s.fc2_weight, (4096, 1536))

    def test_gpt_biases_and_layernorm(self):
        # GPT-22B (Korthikanti et al. 2022 Table 3; resources/models/gpt-22b.json): h 6144, 64 heads
        # of 96, F = 4h, biases, LayerNorm. At TP 8 the ranks together hold the 12 h^2 weights of
        # Narayanan et al. 2021 eq. 2; the 13h biases and norm parameters are QKV 3h and FC1 4h split
        # over TP, proj and FC2 h each and two LayerNorms 2h each on every rank.
        m = prof.read_model("GPT-22B")
        s = prof.layer_shards(m, 8)
        self.assertEqual(s.qkv_weight, (2304, 6144))
        self.assertEqual(8 * s.linear_weight_elements(), 12 * 6144 ** 2)
        self.assertEqual((s.qkv_bias, s.proj_bias, s.fc1_bias, s.fc2_bias), (2304, 6144, 3072, 6144))
        self.assertEqual((s.norm_weight, s.norm_bias), (6144, 6144))
        self.assertEqual(s.parameters(), 56_623_104 + 2304 + 6144 + 3072 + 6144 + 4 * 6144)

    def test_tp_sizes_megatron_refuses(self):
        llama = prof.read_model("LLaMA-2-7B")
        with self.assertRaises(prof.InputError) as ctx:
            prof.layer_shards(llama, 3)
        self.assertEqual(ctx.exception.where, "--tp")
        self.assertIn("32 attention heads", str(ctx.exception))

    def test_micro_batch(self):
        # tokens = micro-batch size x seq_length / CP (docs/formats.md, compute[].tokens).
        self.assertEqual(prof.micro_batch_size(8192, 4096, 1, 8), 2)
        with self.assertRaises(prof.InputError) as ctx:
            prof.micro_batch_size(2048, 4096, 1, 2)
        self.assertEqual(ctx.exception.where, "--tokens")
        with self.assertRaises(prof.InputError) as ctx:
            prof.micro_batch_size(4100, 4100, 1, 8)   # SP splits the 4100 positions over TP 8
        self.assertEqual(ctx.exception.where, "--tp")


class Sizes(unittest.TestCase):
    def test_doubling_ranges(self):
        self.assertEqual(prof.parse_size_list("1M..1G", "--bytes"), [MiB << k for k in range(11)])
        self.assertEqual(prof.parse_size_list("3M..16M", "--bytes"), [3 * MiB, 6 * MiB, 12 * MiB])
        self.assertEqual(prof.parse_size_list("64K,1M,64K", "--bytes"), [65536, MiB])
        self.assertEqual(prof.parse_size_list("1MiB,2G,512", "--bytes"), [512, MiB, 2 * GiB])
        self.assertEqual(prof.parse_size_list("1k..4K", "--bytes"), [1024, 2048, 4096])
        self.assertEqual(prof.parse_size_list("1..8", "--tp", units=False), [1, 2, 4, 8])
        self.assertEqual(prof.parse_size_list("8,2,4", "--tp", units=False), [2, 4, 8])

    def test_bad_sizes_name_the_argument(self):
        for text in ("0", "-1M", "1.5M", "1X", "", " ", "2M..1M", "1M,,2M", "1M..", "1MB"):
            with self.assertRaises(prof.InputError, msg=text) as ctx:
                prof.parse_size_list(text, "--bytes")
            self.assertEqual(ctx.exception.where, "--bytes", text)
        with self.assertRaises(prof.InputError):
            prof.parse_size_list("4K", "--tp", units=False)
        with self.assertRaises(prof.InputError) as ctx:
            prof.parse_size_list(",".join(str(i) for i in range(1, 70)), "--tokens")
        self.assertIn("more than 64", str(ctx.exception))

    def test_primitives(self):
        self.assertEqual(prof.parse_primitives("all"), list(prof.PRIMITIVES))
        self.assertEqual(prof.parse_primitives("none"), [])
        self.assertEqual(prof.parse_primitives("sendrecv,AllToAll,all-reduce"), ["all_reduce", "all_to_all", "send_recv"])
        with self.assertRaises(prof.InputError) as ctx:
            prof.parse_primitives("all_reduce,broadcast")
        self.assertEqual(ctx.exception.where, "--collectives")


class LinksAndGroups(unittest.TestCase):
    TWO_NODES = ["a"] * 8 + ["b"] * 8

    def test_link_classes(self):
        self.assertEqual(prof.link_class(range(8), self.TWO_NODES), "intra_node")
        self.assertEqual(prof.link_class(range(8, 16), self.TWO_NODES), "intra_node")
        self.assertEqual(prof.link_class(range(16), self.TWO_NODES), "inter_node")
        self.assertEqual(prof.link_class([7, 8], self.TWO_NODES), "inter_node")
        self.assertEqual(prof.consecutive_groups(16, 8), [list(range(8)), list(range(8, 16))])
        self.assertEqual(prof.consecutive_groups(8, 2), [[0, 1], [2, 3], [4, 5], [6, 7]])

    def test_send_recv_pairs(self):
        self.assertEqual(prof.send_recv_pairs(["a"] * 8), [(0, 1, "intra_node")])
        self.assertEqual(prof.send_recv_pairs(self.TWO_NODES), [(0, 1, "intra_node"), (0, 8, "inter_node")])
        self.assertEqual(prof.send_recv_pairs(["a", "b"]), [(0, 1, "inter_node")])
        self.assertEqual(prof.send_recv_pairs(["a"]), [])

    def test_default_groups(self):
        L = prof.Layout
        self.assertEqual(prof.default_group_sizes(L(0, 16, 0, 8)), [8, 16])
        self.assertEqual(prof.default_group_sizes(L(0, 8, 0, 8)), [8])
        self.assertEqual(prof.default_group_sizes(L(0, 1, 0, 1)), [])
        self.assertEqual(prof.default_group_sizes(L(0, 2, 0, 1)), [2])   # one rank per node
        self.assertEqual(prof.default_tp_sizes(8), [1, 2, 4, 8])
        self.assertEqual(prof.default_tp_sizes(6), [1, 2])
        prof.check_group_sizes([2, 4, 8, 24], L(0, 24, 0, 8))
        # 12 of 24 ranks at 8 per node would mix one and two nodes; 16 does not divide 24.
        for size in (12, 16, 1):
            with self.assertRaises(prof.InputError, msg=str(size)) as ctx:
                prof.check_group_sizes([size], L(0, 24, 0, 8))
            self.assertEqual(ctx.exception.where, "--group-sizes")

    def test_layout_from_torchrun_environment(self):
        layout = prof.launch_layout({"RANK": "9", "WORLD_SIZE": "16", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "8"})
        self.assertEqual((layout.rank, layout.world, layout.local_world, layout.nodes), (9, 16, 8, 2))
        self.assertEqual(prof.launch_layout({}), prof.Layout(0, 1, 0, 1))
        with self.assertRaises(prof.InputError):
            prof.launch_layout({"WORLD_SIZE": "12", "LOCAL_WORLD_SIZE": "8"})

    def test_hostnames_round_trip(self):
        names = ["gpu-node-01.cluster", "gpu-node-02.cluster", "h\u00f6st"]
        flat = [c for n in names for c in prof.encode_hostname(n)]
        self.assertEqual(len(flat), 3 * prof.HOSTNAME_WIDTH)
        self.assertEqual(prof.decode_hostnames(flat), names)


class Measurements(unittest.TestCase):
    def test_buffers_in_nccl_tests_sense(self):
        # The size is the larger of a rank's send and receive buffers (nccl-tests src/common.cu),
        # in float32 elements rounded down per rank.
        self.assertEqual(prof.buffer_plan("all_reduce", MiB, 8), (262144, 262144, MiB))
        self.assertEqual(prof.buffer_plan("all_gather", MiB, 8), (32768, 262144, MiB))
        self.assertEqual(prof.buffer_plan("reduce_scatter", MiB, 8), (262144, 32768, MiB))
        self.assertEqual(prof.buffer_plan("all_to_all", MiB, 8), (262144, 262144, MiB))
        self.assertEqual(prof.buffer_plan("send_recv", MiB, 2), (262144, 262144, MiB))
        # 1 MiB over 3 ranks: 1048576 // 12 = 87381 floats each, 87381 x 3 x 4 = 1048572 bytes.
        self.assertEqual(prof.buffer_plan("all_gather", MiB, 3), (87381, 262143, 1048572))
        self.assertIsNone(prof.buffer_plan("all_gather", 16, 8))

    def test_repeated_byte_counts_measured_once(self):
        # all_gather on 8 ranks in whole float32 per rank: 1000 // 32 = 31 and 1001 // 32 = 31
        # elements, 31 x 8 x 4 = 992 B for both; 2048 // 32 = 64 -> 2048 B. 16 B is less than one
        # float32 per rank (16 // 32 = 0).
        notes = []
        kept = prof.distinct_buffer_plans("all_gather", [16, 1000, 1001, 2048], 8, notes.append)
        self.assertEqual(kept, [(1000, (31, 248, 992)), (2048, (64, 512, 2048))])
        self.assertEqual(notes, ["all_gather on 8 ranks: 16 B is less than one float32 per rank; skipped",
                                 "all_gather on 8 ranks: 1001 B rounds to 992 B like 1000 B; measured once, for the first"])

    def test_bus_bandwidth(self):
        # nccl-tests doc/PERFORMANCE.md: busbw = S/t x 2(n-1)/n for all-reduce, (n-1)/n for
        # all-gather. 1 GiB over 8 ranks in 4 ms: algbw 268.435 GB/s, busbw x 1.75 = 469.762.
        self.assertAlmostEqual(prof.bus_bandwidth("all_reduce", GiB, 8, 0.004), 469.762, places=3)
        self.assertAlmostEqual(prof.bus_bandwidth("all_gather", GiB, 8, 0.004), 234.881, places=3)
        self.assertAlmostEqual(prof.bus_bandwidth("send_recv", GiB, 2, 0.004), 268.435, places=3)

    def test_aggregation(self):
        # Four ranks, TP groups [0, 1] and [2, 3], three iterations (ms).
        times = [[1.0, 2.0, 3.0],
                 [2.0, 1.0, 5.0],
                 [4.0, 4.0, 4.0],
                 [1.0, 6.0, 1.0]]
        # Group [0, 1]: slowest rank per iteration 2, 2, 5 -> median 2. Group [2, 3]: 4, 6, 4 -> 4.
        # Median of the two groups 3; fastest 2, slowest 4.
        self.assertEqual(prof.aggregate_times(times, [[0, 1], [2, 3]]), (3.0, 2.0, 4.0))
        self.assertEqual(prof.aggregate_times(times, [[0, 1]]), (2.0, 2.0, 2.0))

    def test_torch_version(self):
        self.assertTrue(prof.torch_version_ok("2.1.0+cu121"))
        self.assertTrue(prof.torch_version_ok("2.10.1"))
        self.assertFalse(prof.torch_version_ok("2.0.1"))
        self.assertFalse(prof.torch_version_ok("1.13.1"))

    def test_device_types(self):
        self.assertEqual(prof.resolve_device_type("h800")[0], "H800")
        self.assertEqual(prof.resolve_device_type("Ascend 910B")[0], "910B-376T")
        self.assertEqual(prof.resolve_device_type("mi300x")[0], "MI300X")
        with self.assertRaises(prof.InputError) as ctx:
            prof.resolve_device_type("H9000")
        self.assertEqual(ctx.exception.where, "--device-type")


def measured_profile():
    """A profile assembled from given measured numbers: H800 layer times at TP 1 and 2 for 4096
    and 8192 tokens, and collectives inside a node and across two."""
    compute, notes = [], []
    for tp, tokens, lf, lb, ff, fb in ((1, 4096, 0.0120, 0.0240, 0.0070, 0.0140),
                                       (1, 8192, 0.0250, 0.0500, 0.0140, 0.0280),
                                       (2, 4096, 0.0068, 0.0133, 0.0038, 0.0074),
                                       (2, 8192, 0.0135, 0.0270, 0.0075, 0.0150)):
        entry, n = prof.compute_entry("H800", tp, 1, tokens, lf, lb, ff, fb)
        compute.append(entry)
        notes += n
    collectives = [prof.collective_entry("all_reduce", "intra_node", 8, 134217728, 0.00058, "H800"),
                   prof.collective_entry("all_to_all", "inter_node", 16, 16777216, 0.0021, "H800"),
                   prof.collective_entry("send_recv", "inter_node", 2, 1048576, 0.000052, "H800")]
    source = prof.make_source("H800", "NVIDIA H800", 16, 2, "2.4.0+cu124", "CUDA 12.4, NCCL 2.20.5",
                              __import__("datetime").datetime(2025, 1, 2, 3, 4), "LLaMA-2-7B", 5, 20)
    return prof.assemble_profile("H800 measured", source, compute, collectives), notes


class Profiles(TempDirTest):
    def run_cli(self, *args):
        return subprocess.run([HAPMOE, *args], capture_output=True, text=True, timeout=120)

    def test_assembled_profile(self):
        doc, notes = measured_profile()
        self.assertEqual(notes, [])
        self.assertEqual((doc["format"], doc["version"], doc["name"]), ("hapmoe.profile", 1, "H800 measured"))
        self.assertIn("2.4.0+cu124", doc["source"])
        self.assertIn("2025-01-02", doc["source"])
        self.assertEqual([(e["tp"], e["tokens"]) for e in doc["compute"]], [(1, 4096), (1, 8192), (2, 4096), (2, 8192)])
        self.assertEqual([e["primitive"] for e in doc["collectives"]], ["all_reduce", "all_to_all", "send_recv"])

    def test_ffn_time_capped_at_the_layer(self):
        entry, notes = prof.compute_entry("H800", 2, 1, 4096, 0.004, 0.008, 0.0041, 0.002)
        self.assertEqual((entry["ffn_fwd_s"], entry["ffn_bwd_s"]), (0.004, 0.002))
        self.assertEqual(len(notes), 1)

    def test_assembly_refuses_bad_entries(self):
        doc, _ = measured_profile()
        bad = dict(doc["compute"][0], tokens=0)
        with self.assertRaisesRegex(ValueError, r"profile\.compute\[0\]\.tokens"):
            prof.assemble_profile("x", "y", [bad], [])
        bad = dict(doc["collectives"][0], link="nvlink")
        with self.assertRaisesRegex(ValueError, r"profile\.collectives\[0\]\.link"):
            prof.assemble_profile("x", "y", [], [bad])
        bad = dict(doc["collectives"][0], group_size=1)
        with self.assertRaisesRegex(ValueError, r"group_size"):
            prof.assemble_profile("x", "y", [], [bad])
        # A second entry for one point, as hapmoe's reader refuses it.
        twice = [doc["collectives"][0], dict(doc["collectives"][0], time_s=1.0)]
        with self.assertRaisesRegex(ValueError, r"^profile\.collectives\[1\]: collectives\[0\] already gives this point "
                                                r"\(primitive, link, group_size, bytes, device_type\); expected one entry per point$"):
            prof.assemble_profile("x", "y", [], twice)

    def test_cli_accepts_the_profile(self):
        doc, _ = measured_profile()
        path = str(self.dir / "profile.json")
        prof.write_json_atomically(path, doc)
        r = self.run_cli("validate", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("ok (hapmoe.profile v1, 4 compute, 3 collective, 0 memory entries)", r.stdout)
        self.assertNotIn("unknown", r.stderr)   # no unknown keys, no unknown device type

    def test_cli_estimate_uses_the_profile(self):
        doc, _ = measured_profile()
        path = str(self.dir / "profile.json")
        prof.write_json_atomically(path, doc)
        r = self.run_cli("estimate", "--model", "LLaMA-2-7B", "--cluster", "H800:1x8", "--tp", "2", "--pp", "1",
                         "--mbs", "1", "--gbs", "64", "--sequence-parallel", "--profile", path, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        plan = json.loads(r.stdout)
        self.assertTrue(plan["prediction"]["used_profile"])

    def test_cli_refuses_bad_fields(self):
        doc, _ = measured_profile()
        cases = [("compute", 0, "tokens", 0, "profile.compute[0].tokens"),
                 ("compute", 1, "ffn_fwd_s", 1.0, "profile.compute[1].ffn_fwd_s"),
                 ("compute", 2, "dense_layer_bwd_s", -0.01, "profile.compute[2].dense_layer_bwd_s"),
                 ("collectives", 0, "link", "nvlink", "profile.collectives[0].link"),
                 ("collectives", 1, "group_size", 1, "profile.collectives[1].group_size")]
        for table, index, key, value, where in cases:
            bad = json.loads(json.dumps(doc))
            bad[table][index][key] = value
            path = self.write(f"bad-{key}.json", bad)
            r = self.run_cli("validate", path)
            self.assertEqual(r.returncode, 2, where)
            self.assertIn(where, r.stderr)

    def test_atomic_write_keeps_the_old_file(self):
        path = self.dir / "profile.json"
        prof.write_json_atomically(str(path), {"format": "hapmoe.profile", "version": 1})
        before = path.read_text(encoding="utf-8")
        with self.assertRaises(ValueError):   # NaN is not JSON: fails before the rename
            prof.write_json_atomically(str(path), {"format": "hapmoe.profile", "time_s": float("nan")})
        self.assertEqual(path.read_text(encoding="utf-8"), before)
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["profile.json"])
        with self.assertRaises(OSError):
            prof.write_json_atomically(str(self.dir / "missing" / "p.json"), {})
        self.assertFalse((self.dir / "missing").exists())


class CommandLine(TempDirTest):
    """The script itself: every bad argument ends with one line naming it and exit code 2, before
    anything is measured (without torch the measurement would end with code 1)."""

    def run_script(self, *args, world=None, local_world=None):
        return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120,
                              env=launch_env(world, local_world), cwd=str(self.dir))

    def assertUsageError(self, result, *fragments):
        self.assertEqual(result.returncode, 2, result.stderr)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertTrue(lines[0].startswith("hapmoe_profile: error: "), lines[0])
        for f in fragments:
            self.assertIn(f, lines[0])
        self.assertEqual(result.stdout, "")

    def test_argument_errors(self):
        out = str(self.dir / "p.json")
        base = ["--model", "LLaMA-2-7B", "--device-type", "H800", "-o", out]
        self.assertUsageError(self.run_script(*base, "--tp", "3", world=8), "--tp: 3 does not divide the 8 ranks")
        self.assertUsageError(self.run_script(*base, "--tp", "16", world=16, local_world=8), "--tp: 16")
        self.assertUsageError(self.run_script(*base, "--tp", "0", world=8), "--tp")
        self.assertUsageError(self.run_script(*base, "--bytes", "0", world=8), "--bytes")
        self.assertUsageError(self.run_script(*base, "--bytes", "-1M", world=8), "--bytes")
        self.assertUsageError(self.run_script(*base, "--tokens", "0", world=8), "--tokens")
        self.assertUsageError(self.run_script(*base, "--tokens", "2048", world=8), "--tokens", "4096")
        self.assertUsageError(self.run_script(*base, "--iters", "0", world=8), "--iters")
        self.assertUsageError(self.run_script(*base, "--warmup", "-1", world=8), "--warmup")
        self.assertUsageError(self.run_script(*base, "--cp", "2", world=8), "--cp")
        self.assertUsageError(self.run_script(*base, "--collectives", "gather", world=8), "--collectives")
        self.assertUsageError(self.run_script(*base, "--group-sizes", "3", world=8), "--group-sizes")
        self.assertUsageError(self.run_script("--model", "LLaMA-2-7B", "--device-type", "H9000", "-o", out, world=8),
                              "--device-type", "H9000")
        self.assertUsageError(self.run_script("--model", "LLaMA-2-7B", "--device-type", "H800", world=8), "-o")
        self.assertUsageError(self.run_script("--model", "LLaMA-2-7B", "--device-type", "H800",
                                              "-o", str(self.dir / "no" / "p.json"), world=8), "-o", "no such directory")
        self.assertUsageError(self.run_script("--device-type", "H800", "-o", out, world=8), "--model")
        self.assertUsageError(self.run_script(*base, "--frobnicate", world=8), "--frobnicate")
        self.assertUsageError(self.run_script(*base, world=8), "environment MASTER_ADDR")

    def test_model_file_errors_name_file_and_field(self):
        out = str(self.dir / "p.json")
        bad = self.write("bad.json", model_doc(hidden_size=-8))
        self.assertUsageError(self.run_script("--model", bad, "--device-type", "H800", "-o", out, world=8),
                              bad, "model.hidden_size", "expected a positive integer, got -8")
        cluster = str(SOURCE_DIR / "tests" / "data" / "foundation" / "cluster-v1.json")
        self.assertUsageError(self.run_script("--model", cluster, "--device-type", "H800", "-o", out, world=8),
                              "format", "hapmoe.model", "hapmoe.cluster")
        self.assertUsageError(self.run_script("--model", str(self.dir / "none.json"), "--device-type", "H800",
                                              "-o", out, world=8), "--model", "no such file")
        self.assertFalse(Path(out).exists())

    def test_dry_run_prints_the_plan(self):
        r = self.run_script("--model", "LLaMA-2-7B", "--device-type", "h800", "--tp", "1,2", "--tokens", "4096,8192",
                            "--dry-run", world=16, local_world=8)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("device type H800", r.stdout)
        self.assertIn("compute tp 2: per rank QKV 6144x4096, proj 4096x2048, FC1 11008x4096, FC2 4096x5504", r.stdout)
        self.assertIn("tokens 4096 (mbs 1), 8192 (mbs 2)", r.stdout)
        self.assertIn("collective all_reduce: groups of 8 ranks (intra_node)", r.stdout)
        self.assertIn("collective all_reduce: groups of 16 ranks (inter_node)", r.stdout)
        self.assertIn("collective send_recv: ranks 0 and 8 (inter_node)", r.stdout)
        self.assertIn("sizes: 1 MiB, 2 MiB", r.stdout)


def main():
    global HAPMOE, SCRIPT, prof
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hapmoe", required=True, help="the hapmoe executable")
    parser.add_argument("--script", default=str(SCRIPT), help="app/profiler/hapmoe_profile.py")
    args, rest = parser.parse_known_args()
    HAPMOE = args.hapmoe
    SCRIPT = Path(args.script)
    prof = load_script(SCRIPT)
    unittest.main(argv=[sys.argv[0]] + rest)


if __name__ == "__main__":
    main()
