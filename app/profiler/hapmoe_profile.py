#!/usr/bin/env python3
# hapmoe_profile.py: measures the tables of a hapmoe.profile (docs/formats.md) on the devices it
# runs on, for the cost model's profile look-ups (docs/cost-model.md section 11). How to run it,
# what each table holds and what it cannot measure: docs/profiling.md.
#
#   torchrun --nproc-per-node 8 app/profiler/hapmoe_profile.py --model MODEL.json \
#       --device-type H800 --tp 1,2,4,8 --tokens 4096,8192 -o profile.json
#
# The file has two halves. Everything above "Measurement" is plain Python: argument parsing and
# checking, size lists, model reading, the layer's shard shapes per TP rank, link classes, the
# aggregation of timings and the assembly and atomic writing of the profile. It imports without
# torch (tests/profiler/test_hapmoe_profile.py runs it in CI without torch or an accelerator).
# torch is imported by measure() only, after every argument has been checked.
#
# Targets PyTorch 2.1 or newer (torch.distributed all_gather_into_tensor, reduce_scatter_tensor,
# all_to_all_single, batch_isend_irecv; torch.cuda.Event, or torch.npu.Event with torch_npu).
# Python 3.9 or newer.

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import socket
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

PROG = "hapmoe_profile"

EXIT_OK = 0
EXIT_FAILED = 1      # a measurement failed (no device, torch missing, a collective error)
EXIT_USAGE = 2       # a bad argument or input file, found before any measurement

MODEL_FORMAT = "hapmoe.model"
MODEL_VERSION = 2                    # the newest hapmoe.model layout this script reads
DEVICES_FORMAT = "hapmoe.devices"
DEVICES_VERSION = 1
PROFILE_FORMAT = "hapmoe.profile"
PROFILE_VERSION = 1

# nccl-tests' names, as docs/formats.md spells them in a profile.
PRIMITIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv")
INTRA_NODE = "intra_node"
INTER_NODE = "inter_node"
CROSS_TYPE = "cross_type"
LINK_CLASSES = (INTRA_NODE, INTER_NODE, CROSS_TYPE)

# Collective buffers hold float32, nccl-tests' default data type (src/common.cu, nccltype =
# ncclFloat); the sizes count bytes whatever the type.
ELEMENT_BYTES = 4

# nccl-tests' defaults (src/common.cu: warmup_iters = 5, iters = 20).
DEFAULT_WARMUP = 5
DEFAULT_ITERS = 20
DEFAULT_BYTES = "1M..1G"
DEFAULT_TOKEN_SEQUENCES = (1, 2, 4)  # default --tokens: 1, 2 and 4 sequences per micro-batch
MAX_LIST = 64                        # longest --tp / --tokens / --bytes list accepted
HOSTNAME_WIDTH = 256                 # bytes per rank when the host names are gathered

SCRIPT_DIR = Path(__file__).resolve().parent
REPO_ROOT = SCRIPT_DIR.parent.parent
CATALOG_PATH = REPO_ROOT / "resources" / "devices.json"
MODELS_DIR = REPO_ROOT / "resources" / "models"


class InputError(Exception):
    """A bad argument or input file: one line naming the argument (or file and JSON path) and what
    was expected. The script exits with code 2."""

    def __init__(self, where: str, detail: str):
        super().__init__(f"{where}: {detail}")
        self.where = where
        self.detail = detail


class MeasurementError(Exception):
    """A failure while measuring (no device, torch missing or too old). Exit code 1."""


# --- names, numbers and JSON -------------------------------------------------------------------

def normalized_name(text: str) -> str:
    """Enumerations and device names are matched ignoring case, '-', '_' and spaces
    (docs/formats.md, general rules)."""
    return "".join(ch.lower() for ch in text if ch not in "-_ \t")


def describe(value) -> str:
    """A JSON value as a message shows it."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _unique_keys(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f'the key "{key}" appears twice in one object')
        obj[key] = value
    return obj


def _reject_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def load_json_file(path: str, argument: str):
    """Reads one JSON document. A missing or unreadable file names the argument; malformed JSON
    names the file, line and column."""
    try:
        with open(path, "r", encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise InputError(argument, f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(argument, f"{path}: is a directory, expected a JSON file") from None
    except UnicodeDecodeError:
        raise InputError(path, "malformed JSON: not a UTF-8 text") from None
    except OSError as e:
        raise InputError(argument, f"{path}: cannot read: {e.strerror}") from None
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise InputError(path, f"line {e.lineno}, column {e.colno}: malformed JSON: {e.msg}") from None
    except ValueError as e:
        raise InputError(path, f"malformed JSON: {e}") from None


class _Fields:
    """Typed reads of one JSON object with the rules of docs/formats.md: integers accept 8 and
    8.0 but not 8.5 or "8"; booleans are true/false only; null counts as missing."""

    def __init__(self, obj: Mapping, file: str, prefix: str):
        self.obj = obj
        self.file = file
        self.prefix = prefix

    def where(self, key: str) -> str:
        return f"{self.file}: {self.prefix}.{key}"

    def has(self, key: str) -> bool:
        return key in self.obj and self.obj[key] is not None

    def integer(self, key: str, minimum: int, default: Optional[int] = None, required: bool = False) -> int:
        if not self.has(key):
            if required:
                raise InputError(self.where(key), "missing required key")
            return default
        value = self.obj[key]
        expected = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        ok = isinstance(value, int) and not isinstance(value, bool)
        if isinstance(value, float) and math.isfinite(value) and value == int(value):
            ok, value = True, int(value)
        if not ok or value < minimum:
            raise InputError(self.where(key), f"expected {expected}, got {describe(self.obj[key])}")
        return int(value)

    def boolean(self, key: str, default: bool) -> bool:
        if not self.has(key):
            return default
        value = self.obj[key]
        if not isinstance(value, bool):
            raise InputError(self.where(key), f"expected true or false, got {describe(value)}")
        return value

    def string(self, key: str, default: str = "") -> str:
        if not self.has(key):
            return default
        value = self.obj[key]
        if not isinstance(value, str):
            raise InputError(self.where(key), f"expected a string, got {describe(value)}")
        return value

    def choice(self, key: str, choices: Sequence[str], default: str) -> str:
        if not self.has(key):
            return default
        value = self.obj[key]
        if isinstance(value, str):
            for c in choices:
                if normalized_name(c) == normalized_name(value):
                    return c
        expected = " or ".join(f'"{c}"' for c in choices)
        raise InputError(self.where(key), f"expected {expected}, got {describe(value)}")


# --- the model ---------------------------------------------------------------------------------

def default_ffn_hidden_size(hidden_size: int, swiglu: bool) -> int:
    """Megatron-LM's default FFN width when --ffn-hidden-size is not given
    (megatron/training/arguments.py; docs/formats.md, hapmoe.model): 4h, or int(4h * 2/3 / 64) * 64
    with SwiGLU, computed in floating point as Megatron-LM and the core do."""
    if swiglu:
        return int((4.0 * hidden_size * 2.0 / 3.0) / 64.0) * 64
    return 4 * hidden_size


@dataclass(frozen=True)
class ModelShape:
    """What the profiler needs of a hapmoe.model: the shape of one dense transformer layer."""
    name: str
    file: str
    num_layers: int
    hidden_size: int
    ffn_hidden_size: int
    num_attention_heads: int
    num_query_groups: int      # resolved: 0 in the file means multi-head attention (= heads)
    kv_channels: int           # resolved: 0 in the file means hidden_size / heads
    seq_length: int
    swiglu: bool
    add_bias_linear: bool
    normalization: str         # "RMSNorm" or "LayerNorm"
    precision: str             # "bf16" or "fp16"


def read_model_document(doc, file: str) -> ModelShape:
    """Reads and checks a hapmoe.model document (versions 1 and 2; docs/formats.md)."""
    if not isinstance(doc, dict):
        raise InputError(file, f"expected a JSON object (a {MODEL_FORMAT} document), got {describe(doc)}")
    if doc.get("format") is None:
        raise InputError(f"{file}: format", f'missing required key (expected "{MODEL_FORMAT}")')
    fmt = doc["format"]
    if fmt != MODEL_FORMAT:
        raise InputError(f"{file}: format",
                         f'expected "{MODEL_FORMAT}", got {describe(fmt)} (--model takes a model file or a preset name)')
    top = _Fields(doc, file, "model")
    version = doc.get("version")
    if version is None:
        raise InputError(f"{file}: version", "missing required key")
    if isinstance(version, float) and math.isfinite(version) and version == int(version):
        version = int(version)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError(f"{file}: version", f"expected a positive integer, got {describe(doc['version'])}")
    if version > MODEL_VERSION:
        raise InputError(f"{file}: version",
                         f"this is {MODEL_FORMAT} version {version}, written by a newer HAPMoE Studio; "
                         f"this version reads up to {MODEL_VERSION}")
    num_layers = top.integer("num_layers", 1, required=True)
    hidden = top.integer("hidden_size", 1, required=True)
    heads = top.integer("num_attention_heads", 1, required=True)
    top.integer("vocab_size", 1, required=True)
    seq = top.integer("seq_length", 1, required=True)
    swiglu = top.boolean("swiglu", False)
    ffn = top.integer("ffn_hidden_size", 1, default=default_ffn_hidden_size(hidden, swiglu))
    groups = top.integer("num_query_groups", 0, default=0)
    kv_channels = top.integer("kv_channels", 0, default=0)
    bias = top.boolean("add_bias_linear", False)
    normalization = top.choice("normalization", ("RMSNorm", "LayerNorm"), "RMSNorm")
    name = top.string("name")

    precision = "bf16"
    if version >= 2:
        if top.has("training"):
            training = doc["training"]
            if not isinstance(training, dict):
                raise InputError(top.where("training"), f"expected an object, got {describe(training)}")
            precision = _Fields(training, file, "model.training").choice("precision", ("bf16", "fp16"), "bf16")
    elif top.boolean("fp16", False):   # version 1 kept Megatron's switches at the top level
        precision = "fp16"

    resolved_groups = groups if groups > 0 else heads
    if heads % resolved_groups != 0:
        raise InputError(top.where("num_query_groups"),
                         f"{heads} attention heads are not divisible by {resolved_groups} query groups")
    if kv_channels == 0 and hidden % heads != 0:
        raise InputError(top.where("hidden_size"),
                         f"{hidden} is not divisible by {heads} attention heads (give kv_channels)")
    resolved_kv = kv_channels if kv_channels > 0 else hidden // heads
    return ModelShape(name=name, file=file, num_layers=num_layers, hidden_size=hidden, ffn_hidden_size=ffn,
                      num_attention_heads=heads, num_query_groups=resolved_groups, kv_channels=resolved_kv,
                      seq_length=seq, swiglu=swiglu, add_bias_linear=bias, normalization=normalization,
                      precision=precision)


def find_model_preset(name: str, models_dir: Path = MODELS_DIR) -> Optional[str]:
    """The built-in model file whose name (or file stem) matches, as the hapmoe command matches
    preset names (ignoring case, '-', '_' and spaces); None when none does."""
    wanted = normalized_name(name)
    if not wanted or not models_dir.is_dir():
        return None
    for path in sorted(models_dir.glob("*.json")):
        if normalized_name(path.stem) == wanted:
            return str(path)
        try:
            with open(path, "r", encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and isinstance(doc.get("name"), str) and normalized_name(doc["name"]) == wanted:
            return str(path)
    return None


def read_model(argument: str, models_dir: Path = MODELS_DIR) -> ModelShape:
    """--model: a preset name (LLaMA-2-7B, Mixtral-S, ...) or a hapmoe.model file. As with the
    hapmoe command, a preset name wins; an argument with a '/' or ending in .json is a file."""
    if not argument:
        raise InputError("--model", "expected a hapmoe.model file or a model preset name, got nothing")
    path = argument
    if os.sep not in argument and "/" not in argument and not argument.lower().endswith(".json"):
        preset = find_model_preset(argument, models_dir)
        if preset is not None:
            path = preset
        elif not os.path.exists(argument):
            raise InputError("--model", f"{argument}: no such file, and not a model preset name")
    return read_model_document(load_json_file(path, "--model"), path)


# --- the layer as Megatron-Core shards it over TP ------------------------------------------------

@dataclass(frozen=True)
class LayerShards:
    """Weight shapes of one dense transformer layer on one rank of a TP group, as Megatron-Core
    builds it (megatron/core/transformer: linear_qkv and linear_fc1 column-parallel, linear_proj
    and linear_fc2 row-parallel; weights stored [output, input])."""
    tp: int
    query_heads: int           # attention heads this rank computes
    kv_groups: int             # key/value groups this rank holds
    kv_channels: int
    qkv_weight: Tuple[int, int]
    qkv_gathered: bool         # fewer query groups than TP: the QKV output is all-gathered over TP
    proj_weight: Tuple[int, int]
    fc1_weight: Tuple[int, int]
    fc2_weight: Tuple[int, int]
    qkv_bias: int              # 0 without add_bias_linear
    proj_bias: int             # row-parallel biases are not split: h on every rank
    fc1_bias: int
    fc2_bias: int
    norm_weight: int           # each of the two norms
    norm_bias: int             # LayerNorm only

    def linear_weight_elements(self) -> int:
        return sum(r * c for r, c in (self.qkv_weight, self.proj_weight, self.fc1_weight, self.fc2_weight))

    def parameters(self) -> int:
        """Parameters of the layer on this rank (weights, biases, both norms)."""
        return (self.linear_weight_elements() + self.qkv_bias + self.proj_bias + self.fc1_bias + self.fc2_bias
                + 2 * (self.norm_weight + self.norm_bias))


def layer_shards(model: ModelShape, tp: int) -> LayerShards:
    """Shard shapes per TP rank. Raises InputError("--tp", ...) when Megatron-LM would refuse the
    TP size for this model: heads not divisible by TP, query groups and TP not dividing one
    another (megatron/training/arguments.py validate_args), FFN width not divisible by TP."""
    a, g, c = model.num_attention_heads, model.num_query_groups, model.kv_channels
    h, ffn = model.hidden_size, model.ffn_hidden_size
    gl = 2 if model.swiglu else 1
    if tp < 1:
        raise InputError("--tp", f"expected positive TP sizes, got {tp}")
    if a % tp != 0:
        raise InputError("--tp", f"{tp} does not divide the model's {a} attention heads (model.num_attention_heads)")
    if g % tp != 0 and tp % g != 0:
        raise InputError("--tp", f"TP {tp} and the model's {g} query groups must divide one another")
    if ffn % tp != 0:
        raise InputError("--tp", f"{tp} does not divide the model's FFN width {ffn} (model.ffn_hidden_size)")
    if g >= tp:
        heads, groups = a // tp, g // tp
        qkv_rows = (heads + 2 * groups) * c
        gathered = False
    else:
        # Megatron-Core (transformer/attention.py) with num_query_groups < TP: linear_qkv splits
        # its (a + 2g) c outputs over TP, the output is all-gathered over TP, and each rank keeps
        # one key/value group and a / TP of that group's query heads.
        total = (a + 2 * g) * c
        if total % tp != 0:
            raise InputError("--tp", f"{tp} does not divide the model's {total} QKV outputs ((heads + 2 x groups) x kv_channels)")
        heads, groups = a // tp, 1
        qkv_rows = total // tp
        gathered = True
    bias = model.add_bias_linear
    return LayerShards(
        tp=tp, query_heads=heads, kv_groups=groups, kv_channels=c,
        qkv_weight=(qkv_rows, h), qkv_gathered=gathered,
        proj_weight=(h, heads * c),
        fc1_weight=(gl * ffn // tp, h),
        fc2_weight=(h, ffn // tp),
        qkv_bias=qkv_rows if bias else 0, proj_bias=h if bias else 0,
        fc1_bias=gl * ffn // tp if bias else 0, fc2_bias=h if bias else 0,
        norm_weight=h, norm_bias=h if model.normalization == "LayerNorm" else 0)


def micro_batch_size(tokens: int, seq_length: int, cp: int, tp: int) -> int:
    """Sequences per micro-batch for a compute entry of `tokens` tokens per device replica,
    tokens = micro-batch size x seq_length / CP (docs/formats.md, compute[].tokens). With sequence
    parallelism each TP rank holds seq_length / CP / TP positions of every sequence."""
    per_rank = seq_length // cp
    if seq_length % cp != 0:
        raise InputError("--cp", f"{cp} does not divide the sequence length {seq_length}")
    if tokens % per_rank != 0:
        raise InputError("--tokens", f"{tokens} is not a multiple of the sequence length per CP rank, {per_rank} "
                                     f"(tokens = micro-batch size x seq_length / CP; set --seq-length to profile another length)")
    if per_rank % tp != 0:
        raise InputError("--tp", f"{tp} does not divide the sequence length per CP rank, {per_rank} "
                                 "(sequence parallelism splits the sequence over TP)")
    return tokens // per_rank


# --- sizes and lists -----------------------------------------------------------------------------

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
_SIZE_RE = re.compile(r"^(\d+)(?:([kKmMgG])(?:iB)?)?$")
_INT_RE = re.compile(r"^(\d+)$")


def parse_size(text: str, argument: str, units: bool = True) -> int:
    """One positive size: 1048576, 64K, 1M, 1G (K, M and G are 2^10, 2^20 and 2^30, as nccl-tests
    reads its -b and -e options, src/common.cu parsesize), optionally with iB (1MiB)."""
    t = text.strip()
    m = (_SIZE_RE if units else _INT_RE).match(t)
    if not m:
        expected = "a positive size such as 1048576, 64K, 1M or 1G" if units else "a positive integer"
        raise InputError(argument, f"expected {expected}, got \"{text}\"")
    value = int(m.group(1)) * (_UNITS[(m.group(2) or "").lower()] if units else 1)
    if value <= 0:
        raise InputError(argument, f"expected a positive value, got \"{text}\"")
    return value


def parse_size_list(text: str, argument: str, units: bool = True) -> List[int]:
    """A comma-separated list of sizes and doubling ranges: "1M..1G" is 1M, 2M, 4M, ..., 1G;
    "3M..16M" is 3M, 6M, 12M (the last not above the end). Sorted, without repeats."""
    if text is None or not text.strip():
        raise InputError(argument, "expected a list such as 1M..1G or 2048,4096, got nothing")
    values = set()
    for item in text.split(","):
        item = item.strip()
        if not item:
            raise InputError(argument, f"empty item in \"{text}\"")
        if ".." in item:
            lo_text, _, hi_text = item.partition("..")
            lo, hi = parse_size(lo_text, argument, units), parse_size(hi_text, argument, units)
            if lo > hi:
                raise InputError(argument, f"the range \"{item}\" starts above its end")
            v = lo
            while v <= hi:
                values.add(v)
                v *= 2
                if len(values) > MAX_LIST:
                    break
        else:
            values.add(parse_size(item, argument, units))
        if len(values) > MAX_LIST:
            raise InputError(argument, f"more than {MAX_LIST} values in \"{text}\"")
    return sorted(values)


def parse_primitives(text: str) -> List[str]:
    """--collectives: "all", "none" or a comma list of nccl-tests' names (all_reduce, all_gather,
    reduce_scatter, all_to_all, send_recv; alltoall, sendrecv also read), in a fixed order."""
    t = (text or "").strip()
    if normalized_name(t) == "all":
        return list(PRIMITIVES)
    if normalized_name(t) in ("none", ""):
        return []
    known = {normalized_name(p): p for p in PRIMITIVES}
    chosen = set()
    for item in t.split(","):
        key = normalized_name(item)
        if key not in known:
            raise InputError("--collectives", f"unknown primitive \"{item.strip()}\"; expected all, none or a list of "
                                              + ", ".join(PRIMITIVES))
        chosen.add(known[key])
    return [p for p in PRIMITIVES if p in chosen]


def parse_count(text: str, argument: str, minimum: int) -> int:
    t = (text or "").strip()
    if not _INT_RE.match(t) or int(t) < minimum:
        expected = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise InputError(argument, f"expected {expected}, got \"{text}\"")
    return int(t)


# --- the device catalog --------------------------------------------------------------------------

_DEVICE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._()-]{0,63}$")


def _catalog_types(doc, file: str) -> List[Tuple[str, List[str]]]:
    """(name, aliases) of every type of a hapmoe.devices document."""
    if not isinstance(doc, dict) or doc.get("format") != DEVICES_FORMAT:
        got = describe(doc.get("format")) if isinstance(doc, dict) else describe(doc)
        raise InputError(f"{file}: format", f'expected "{DEVICES_FORMAT}", got {got}')
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError(f"{file}: version", f"expected a positive integer, got {describe(version)}")
    if version > DEVICES_VERSION:
        raise InputError(f"{file}: version", f"this is {DEVICES_FORMAT} version {version}, written by a newer "
                                             f"HAPMoE Studio; this version reads up to {DEVICES_VERSION}")
    devices = doc.get("devices")
    if not isinstance(devices, list):
        raise InputError(f"{file}: devices", f"expected an array, got {describe(devices)}")
    types = []
    for i, d in enumerate(devices):
        if not isinstance(d, dict) or not isinstance(d.get("name"), str) or not d["name"].strip():
            raise InputError(f"{file}: devices[{i}].name", "expected a non-empty string")
        aliases = d.get("aliases") or []
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise InputError(f"{file}: devices[{i}].aliases", "expected an array of strings")
        types.append((d["name"], list(aliases)))
    return types


def resolve_device_type(name: str, catalog_path: Optional[Path] = CATALOG_PATH,
                        user_catalog: Optional[str] = None) -> Tuple[str, List[str]]:
    """The catalog's canonical name for --device-type (a name or alias, matched ignoring case, '-',
    '_' and spaces; canonical names win over aliases, types of --devices FILE over built-in ones),
    and warnings. Profile look-ups compare names exactly (ignoring case), so entries must carry the
    canonical name."""
    warnings: List[str] = []
    if not name or not name.strip():
        raise InputError("--device-type", "expected a device type of the catalog, such as H800, got nothing")
    user_types: List[Tuple[str, List[str]]] = []
    if user_catalog:
        user_types = _catalog_types(load_json_file(user_catalog, "--devices"), user_catalog)
    builtin_types: List[Tuple[str, List[str]]] = []
    if catalog_path is not None and catalog_path.is_file():
        builtin_types = _catalog_types(load_json_file(str(catalog_path), "catalog"), str(catalog_path))
    wanted = normalized_name(name)
    for types in (user_types, builtin_types):
        for canonical, _ in types:
            if normalized_name(canonical) == wanted:
                return canonical, warnings
        for canonical, aliases in types:
            if any(normalized_name(a) == wanted for a in aliases):
                return canonical, warnings
    if not builtin_types and not user_types:
        if not _DEVICE_NAME_RE.match(name.strip()):
            raise InputError("--device-type", f"expected a device type name such as H800, got \"{name}\"")
        warnings.append(f"the device catalog ({catalog_path}) was not found: --device-type \"{name}\" is not checked; "
                        "it must be the catalog's name for the profile to apply")
        return name.strip(), warnings
    known = ", ".join(t for t, _ in user_types + builtin_types)
    raise InputError("--device-type", f"unknown device type \"{name}\"; expected a name or alias of the device "
                                      f"catalog ({known}) or of a --devices FILE")


# --- launch layout, groups and link classes -----------------------------------------------------

@dataclass(frozen=True)
class Layout:
    """Where this process sits, from torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK,
    LOCAL_WORLD_SIZE). Without torchrun: one process, rank 0."""
    rank: int
    world: int
    local_rank: int
    local_world: int

    @property
    def nodes(self) -> int:
        return self.world // self.local_world


def launch_layout(env: Mapping[str, str]) -> Layout:
    def get(key: str, default: int) -> int:
        value = env.get(key)
        if value is None or value == "":
            return default
        if not _INT_RE.match(value.strip()):
            raise InputError(f"environment {key}", f"expected a non-negative integer, got \"{value}\"")
        return int(value)

    world = get("WORLD_SIZE", 1)
    rank = get("RANK", 0)
    local_rank = get("LOCAL_RANK", 0)
    local_world = get("LOCAL_WORLD_SIZE", world)
    if world < 1 or local_world < 1:
        raise InputError("environment WORLD_SIZE", "expected at least one rank")
    if world % local_world != 0:
        raise InputError("environment LOCAL_WORLD_SIZE",
                         f"{local_world} ranks per node do not divide WORLD_SIZE {world}; "
                         "start the same number of processes on every node (torchrun --nproc-per-node)")
    if rank >= world or local_rank >= local_world:
        raise InputError("environment RANK", f"rank {rank} (local {local_rank}) outside {world} ranks "
                                             f"({local_world} per node)")
    return Layout(rank=rank, world=world, local_rank=local_rank, local_world=local_world)


def divisors(n: int) -> List[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def check_tp_sizes(tps: Sequence[int], local_world: int) -> None:
    """Every TP size must divide the ranks of one node, so that TP groups of consecutive ranks
    stay inside a node (Megatron-LM puts TP innermost)."""
    for tp in tps:
        if local_world % tp != 0:
            raise InputError("--tp", f"{tp} does not divide the {local_world} ranks of one node "
                                     f"(torchrun --nproc-per-node); expected one of "
                                     + ", ".join(str(d) for d in divisors(local_world)))


def default_tp_sizes(local_world: int) -> List[int]:
    """Powers of two that divide the ranks of one node."""
    return [d for d in divisors(local_world) if d & (d - 1) == 0]


def check_group_sizes(sizes: Sequence[int], layout: Layout) -> None:
    for g in sizes:
        if g < 2:
            raise InputError("--group-sizes", f"expected groups of at least 2 ranks, got {g}")
        if layout.world % g != 0:
            raise InputError("--group-sizes", f"{g} does not divide the {layout.world} ranks (WORLD_SIZE)")
        if layout.local_world % g != 0 and g % layout.local_world != 0:
            raise InputError("--group-sizes", f"{g} neither divides nor is a multiple of the {layout.local_world} "
                                              "ranks of one node")


def default_group_sizes(layout: Layout) -> List[int]:
    """The intra-node group (when there are several nodes) and the whole world."""
    sizes = []
    if layout.nodes > 1 and layout.local_world >= 2:
        sizes.append(layout.local_world)
    if layout.world >= 2:
        sizes.append(layout.world)
    return sorted(set(sizes))


def consecutive_groups(world: int, size: int) -> List[List[int]]:
    """Groups of `size` consecutive ranks, as Megatron-LM forms TP groups (TP innermost)."""
    return [list(range(start, start + size)) for start in range(0, world, size)]


def link_class(ranks: Sequence[int], hostnames: Sequence[str]) -> str:
    """intra_node when every rank of the group runs on one host, inter_node otherwise. Different
    device types (cross_type) never meet in one run of this script."""
    return INTRA_NODE if len({hostnames[r] for r in ranks}) == 1 else INTER_NODE


def send_recv_pairs(hostnames: Sequence[str]) -> List[Tuple[int, int, str]]:
    """The rank pairs for send_recv: the first two ranks on one host (intra_node) and rank 0 with
    the first rank on another host (inter_node), each when it exists."""
    pairs = []
    first_on_host: Dict[str, int] = {}
    for r, host in enumerate(hostnames):
        if host in first_on_host:
            pairs.append((first_on_host[host], r, INTRA_NODE))
            break
        first_on_host[host] = r
    for r, host in enumerate(hostnames):
        if host != hostnames[0]:
            pairs.append((0, r, INTER_NODE))
            break
    return pairs


def assumed_hostnames(layout: Layout) -> List[str]:
    """Host names as torchrun numbers nodes (rank = node rank x local world + local rank), for the
    plan printed before the real names are gathered."""
    return [f"node{r // layout.local_world}" for r in range(layout.world)]


def encode_hostname(name: str, width: int = HOSTNAME_WIDTH) -> List[int]:
    data = name.encode("utf-8")[: width - 1]
    return list(data) + [0] * (width - len(data))


def decode_hostnames(flat: Sequence[int], width: int = HOSTNAME_WIDTH) -> List[str]:
    names = []
    for start in range(0, len(flat), width):
        raw = bytes(int(v) & 0xFF for v in flat[start:start + width])
        names.append(raw.split(b"\0", 1)[0].decode("utf-8", errors="replace"))
    return names


def buffer_plan(primitive: str, size: int, group_size: int) -> Optional[Tuple[int, int, int]]:
    """(send elements, receive elements, bytes) of one collective of `size` bytes in nccl-tests'
    sense: the size nccl-tests reports is the larger of the send and receive buffers of one rank
    (src/common.cu prints max(sendBytes, expectedBytes)), i.e. the buffer of all_reduce, the
    gathered output of all_gather (src/all_gather.cu: recvcount = (count/nranks)*nranks), the
    input of reduce_scatter, the send buffer of all_to_all (src/alltoall.cu) and the message of
    send_recv. Sizes are rounded down to whole float32 elements per rank, as nccl-tests rounds
    counts; None when nothing is left."""
    n = group_size
    if primitive in ("all_reduce", "send_recv"):
        count = size // ELEMENT_BYTES
        plan = (count, count, count * ELEMENT_BYTES)
    elif primitive == "all_gather":
        per = size // (ELEMENT_BYTES * n)
        plan = (per, per * n, per * n * ELEMENT_BYTES)
    elif primitive == "reduce_scatter":
        per = size // (ELEMENT_BYTES * n)
        plan = (per * n, per, per * n * ELEMENT_BYTES)
    elif primitive == "all_to_all":
        per = size // (ELEMENT_BYTES * n)
        plan = (per * n, per * n, per * n * ELEMENT_BYTES)
    else:
        raise ValueError(f"unknown primitive {primitive}")
    return plan if plan[2] > 0 else None


def distinct_buffer_plans(primitive: str, sizes: Sequence[int], group_size: int,
                          note: Callable[[str], None]) -> List[Tuple[int, Tuple[int, int, int]]]:
    """(size, buffer plan) for each --bytes size that leaves at least one float32 per rank and
    measures a byte count no earlier size measured: two sizes rounding to the same whole
    elements (1000 and 1001 B of all_gather on 8 ranks are both 992 B) would give the profile
    two entries for one point, which hapmoe refuses. The first is kept; note() says which
    were dropped."""
    kept: List[Tuple[int, Tuple[int, int, int]]] = []
    first_of: Dict[int, int] = {}
    for size in sizes:
        plan = buffer_plan(primitive, size, group_size)
        if plan is None:
            note(f"{primitive} on {group_size} ranks: {size} B is less than one float32 per rank; skipped")
            continue
        if plan[2] in first_of:
            note(f"{primitive} on {group_size} ranks: {size} B rounds to {plan[2]} B like {first_of[plan[2]]} B; "
                 "measured once, for the first")
            continue
        first_of[plan[2]] = size
        kept.append((size, plan))
    return kept


def bus_bandwidth(primitive: str, size: float, group_size: int, seconds: float) -> float:
    """nccl-tests' bus bandwidth in GB/s (doc/PERFORMANCE.md): algbw = size / time, times
    2(n-1)/n for all_reduce, (n-1)/n for all_gather, reduce_scatter and all_to_all, 1 for
    send_recv. Printed beside each time so that it can be compared with nccl-tests."""
    n = group_size
    factor = {"all_reduce": 2.0 * (n - 1) / n, "all_gather": (n - 1) / n, "reduce_scatter": (n - 1) / n,
              "all_to_all": (n - 1) / n, "send_recv": 1.0}[primitive]
    return size / seconds / 1e9 * factor


def aggregate_times(per_rank: Sequence[Sequence[float]], groups: Sequence[Sequence[int]]) -> Tuple[float, float, float]:
    """One figure from per-iteration times of every rank: in each iteration a group is as slow as
    its slowest rank; a group's time is the median over its iterations; the result is the median
    over the groups that ran side by side, with the fastest and slowest group's time."""
    group_times = []
    for ranks in groups:
        iterations = len(per_rank[ranks[0]])
        slowest = [max(per_rank[r][i] for r in ranks) for i in range(iterations)]
        group_times.append(statistics.median(slowest))
    return statistics.median(group_times), min(group_times), max(group_times)


# --- the profile -----------------------------------------------------------------------------------

def _significant(x: float, digits: int = 6) -> float:
    return float(f"{x:.{digits}g}")


def compute_entry(device_type: str, tp: int, cp: int, tokens: int, layer_fwd_s: float, layer_bwd_s: float,
                  ffn_fwd_s: float, ffn_bwd_s: float) -> Tuple[dict, List[str]]:
    """One compute[] entry (docs/formats.md) and notes. The FFN is part of the layer; a FFN time
    measured above its layer's (timing noise at small sizes) is capped at the layer's, since the
    cost model subtracts it from the layer's (docs/cost-model.md section 3.4)."""
    notes = []
    if ffn_fwd_s > layer_fwd_s:
        notes.append(f"tp {tp} tokens {tokens}: FFN forward {ffn_fwd_s:.6g} s above the layer's {layer_fwd_s:.6g} s; capped")
        ffn_fwd_s = layer_fwd_s
    if ffn_bwd_s > layer_bwd_s:
        notes.append(f"tp {tp} tokens {tokens}: FFN backward {ffn_bwd_s:.6g} s above the layer's {layer_bwd_s:.6g} s; capped")
        ffn_bwd_s = layer_bwd_s
    entry = {"device_type": device_type, "tp": tp, "cp": cp, "tokens": tokens,
             "dense_layer_fwd_s": _significant(layer_fwd_s), "dense_layer_bwd_s": _significant(layer_bwd_s),
             "ffn_fwd_s": min(_significant(ffn_fwd_s), _significant(layer_fwd_s)),
             "ffn_bwd_s": min(_significant(ffn_bwd_s), _significant(layer_bwd_s))}
    return entry, notes


def collective_entry(primitive: str, link: str, group_size: int, size: int, time_s: float, device_type: str) -> dict:
    return {"primitive": primitive, "link": link, "group_size": group_size, "bytes": size,
            "time_s": _significant(time_s), "device_type": device_type}


def _positive_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def _positive_int(value, minimum: int = 1) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def check_profile_entries(compute: Sequence[dict], collectives: Sequence[dict]) -> None:
    """The checks hapmoe's reader applies to these entries (docs/formats.md, hapmoe.profile);
    raises ValueError naming the entry and field."""
    for i, e in enumerate(compute):
        where = f"profile.compute[{i}]"
        if not isinstance(e.get("device_type"), str) or not e["device_type"]:
            raise ValueError(f"{where}.device_type: expected a device type name")
        for key in ("tp", "cp", "tokens"):
            if not _positive_int(e.get(key)):
                raise ValueError(f"{where}.{key}: expected a positive integer, got {describe(e.get(key))}")
        for key in ("dense_layer_fwd_s", "dense_layer_bwd_s"):
            if not _positive_number(e.get(key)):
                raise ValueError(f"{where}.{key}: expected a positive number of seconds, got {describe(e.get(key))}")
        for key, layer in (("ffn_fwd_s", "dense_layer_fwd_s"), ("ffn_bwd_s", "dense_layer_bwd_s")):
            v = e.get(key)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 0 or v > e[layer]:
                raise ValueError(f"{where}.{key}: expected a number in [0, {layer}], got {describe(v)}")
    _check_one_entry_per_point(compute, "compute", ("tp", "cp", "tokens"))
    for i, e in enumerate(collectives):
        where = f"profile.collectives[{i}]"
        if e.get("primitive") not in PRIMITIVES:
            raise ValueError(f"{where}.primitive: expected one of {', '.join(PRIMITIVES)}, got {describe(e.get('primitive'))}")
        if e.get("link") not in LINK_CLASSES:
            raise ValueError(f"{where}.link: expected one of {', '.join(LINK_CLASSES)}, got {describe(e.get('link'))}")
        if not _positive_int(e.get("group_size"), 2):
            raise ValueError(f"{where}.group_size: expected an integer >= 2, got {describe(e.get('group_size'))}")
        for key in ("bytes", "time_s"):
            if not _positive_number(e.get(key)):
                raise ValueError(f"{where}.{key}: expected a positive number, got {describe(e.get(key))}")
    _check_one_entry_per_point(collectives, "collectives", ("primitive", "link", "group_size", "bytes"))


def _check_one_entry_per_point(entries: Sequence[dict], name: str, keys: Sequence[str]) -> None:
    """One entry per table point (the keys and the device type, in any case), as hapmoe's reader
    requires: a second would make the result depend on the order of the file."""
    seen: Dict[tuple, int] = {}
    for i, e in enumerate(entries):
        point = tuple(e[k] for k in keys) + (str(e.get("device_type", "")).lower(),)
        if point in seen:
            raise ValueError(f"profile.{name}[{i}]: {name}[{seen[point]}] already gives this point "
                             f"({', '.join(keys)}, device_type); expected one entry per point")
        seen[point] = i


def assemble_profile(name: str, source: str, compute: Sequence[dict], collectives: Sequence[dict]) -> dict:
    """A hapmoe.profile document (version 1) from measured entries, in a stable order: compute by
    (device, TP, CP, tokens), collectives by (primitive, link, group size, bytes)."""
    check_profile_entries(compute, collectives)
    order = {p: i for i, p in enumerate(PRIMITIVES)}
    compute_sorted = sorted(compute, key=lambda e: (e["device_type"], e["tp"], e["cp"], e["tokens"]))
    coll_sorted = sorted(collectives, key=lambda e: (order[e["primitive"]], e["link"], e["group_size"], e["bytes"],
                                                     e.get("device_type", "")))
    return {"format": PROFILE_FORMAT, "version": PROFILE_VERSION, "name": name, "source": source,
            "compute": [dict(e) for e in compute_sorted], "collectives": [dict(e) for e in coll_sorted]}


def make_source(device_type: str, device_name: str, ranks: int, hosts: int, torch_version: str, library: str,
                when: datetime.datetime, model: str, warmup: int, iters: int) -> str:
    return (f"hapmoe_profile.py on {ranks} x {device_type} ({device_name}) on {hosts} node(s); "
            f"torch {torch_version}, {library}; {when.strftime('%Y-%m-%d %H:%M UTC')}; model {model}; "
            f"median of {iters} timed iterations after {warmup} warm-up")


def write_json_atomically(path: str, doc) -> None:
    """Writes `doc` as JSON: a temporary file in the target's folder, flushed and fsync'ed, then
    renamed over the target (os.replace), so that a failure leaves the old file, or none, and no
    half-written one (docs/formats.md: saves are atomic)."""
    target = os.path.abspath(path)
    folder = os.path.dirname(target)
    text = json.dumps(doc, indent=2, allow_nan=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:   # make the rename itself durable
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


# --- arguments ---------------------------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    def error(self, message):   # one line and exit code 2, like every other argument error
        raise InputError("arguments", message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="hapmoe_profile.py", allow_abbrev=False,
                description="Measure a hapmoe.profile: one dense transformer layer per TP size and token "
                            "count, and collectives per primitive, group and size. Launch with torchrun; "
                            "see docs/profiling.md.")
    p.add_argument("--model", required=True, metavar="MODEL",
                   help="hapmoe.model file, or a model preset name (LLaMA-2-7B, Mixtral-S, ...)")
    p.add_argument("--device-type", required=True, metavar="TYPE",
                   help="device catalog name or alias of the devices (hapmoe presets devices lists them)")
    p.add_argument("--devices", metavar="FILE", help="a hapmoe.devices file with more device types")
    p.add_argument("--tp", metavar="LIST", help="TP sizes, each dividing the ranks of one node "
                                                "(default: the powers of two that do)")
    p.add_argument("--cp", metavar="N", default="1", help="context parallelism of the entries; only 1 is measured")
    p.add_argument("--tokens", metavar="LIST", help="tokens per device replica, micro-batch size x seq_length / CP "
                                                    "(default: 1, 2 and 4 sequences)")
    p.add_argument("--seq-length", metavar="N", help="sequence length (default: the model's seq_length)")
    p.add_argument("--collectives", metavar="LIST", default="all",
                   help="all, none, or a list of all_reduce, all_gather, reduce_scatter, all_to_all, send_recv")
    p.add_argument("--bytes", metavar="SIZES", default=DEFAULT_BYTES,
                   help="collective sizes in nccl-tests' sense: list or doubling range (default 1M..1G)")
    p.add_argument("--group-sizes", metavar="LIST",
                   help="collective group sizes (default: the ranks of one node when there are several nodes, "
                        "and all ranks)")
    p.add_argument("--warmup", metavar="N", default=str(DEFAULT_WARMUP), help="warm-up iterations (default 5)")
    p.add_argument("--iters", metavar="N", default=str(DEFAULT_ITERS), help="timed iterations (default 20)")
    p.add_argument("--skip-compute", action="store_true", help="measure the collectives only")
    p.add_argument("--name", help="the profile's name (default: \"TYPE measured\")")
    p.add_argument("-o", "--output", metavar="FILE", help="the hapmoe.profile to write (rank 0 writes it)")
    p.add_argument("--dry-run", action="store_true",
                   help="check the arguments, print what would be measured and exit without torch")
    return p


@dataclass
class Config:
    model: ModelShape
    device_type: str
    tps: List[int]
    cp: int
    seq_length: int
    tokens: List[int]
    primitives: List[str]
    sizes: List[int]
    group_sizes: List[int]
    warmup: int
    iters: int
    skip_compute: bool
    name: str
    output: Optional[str]
    layout: Layout
    dry_run: bool
    warnings: List[str] = field(default_factory=list)


def check_output(path: Optional[str]) -> str:
    if not path:
        raise InputError("-o", "expected the profile file to write (-o profile.json)")
    target = os.path.abspath(path)
    folder = os.path.dirname(target)
    if os.path.isdir(target):
        raise InputError("-o", f"{path}: is a directory, expected a file name")
    if not os.path.isdir(folder):
        raise InputError("-o", f"{folder}: no such directory")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError("-o", f"{folder}: cannot write in this directory")
    return path


def check_arguments(argv: Optional[Sequence[str]], env: Mapping[str, str],
                    catalog_path: Optional[Path] = CATALOG_PATH, models_dir: Path = MODELS_DIR) -> Config:
    """Parses and checks every argument before anything is measured; raises InputError."""
    ns = build_parser().parse_args(argv)
    layout = launch_layout(env)
    model = read_model(ns.model, models_dir)
    device_type, warnings = resolve_device_type(ns.device_type, catalog_path, ns.devices)

    cp = parse_count(ns.cp, "--cp", 1)
    if cp != 1:
        raise InputError("--cp", f"expected 1, got {cp}: this script does not measure context parallelism (the ring "
                                 "exchange of K and V); the cost model's analytic terms cover CP > 1 (docs/profiling.md)")
    seq = parse_count(ns.seq_length, "--seq-length", 1) if ns.seq_length is not None else model.seq_length

    if ns.skip_compute:
        tps, tokens = [], []
    else:
        tps = parse_size_list(ns.tp, "--tp", units=False) if ns.tp is not None else default_tp_sizes(layout.local_world)
        check_tp_sizes(tps, layout.local_world)
        for tp in tps:
            layer_shards(model, tp)
        tokens = (parse_size_list(ns.tokens, "--tokens") if ns.tokens is not None
                  else [k * seq // cp for k in DEFAULT_TOKEN_SEQUENCES])
        for t in tokens:
            for tp in tps:
                micro_batch_size(t, seq, cp, tp)

    primitives = parse_primitives(ns.collectives)
    sizes = parse_size_list(ns.bytes, "--bytes")
    if ns.group_sizes is not None:
        group_sizes = parse_size_list(ns.group_sizes, "--group-sizes", units=False)
        check_group_sizes(group_sizes, layout)
    else:
        group_sizes = default_group_sizes(layout)
    if primitives and layout.world < 2:
        warnings.append("one rank: no collective to measure (launch several ranks with torchrun)")
        primitives = []
    warmup = parse_count(ns.warmup, "--warmup", 0)
    iters = parse_count(ns.iters, "--iters", 1)
    if warmup == 0:
        warnings.append("--warmup 0: the first timed iteration includes communicator set-up and kernel selection")
    if ns.skip_compute and not primitives:
        raise InputError("--skip-compute", "nothing to measure: no compute table and no collectives")
    output = ns.output if ns.dry_run and ns.output is None else check_output(ns.output)
    if not ns.dry_run and layout.world > 1 and not env.get("MASTER_ADDR"):
        raise InputError("environment MASTER_ADDR", "not set: launch the script with torchrun")
    name = ns.name if ns.name is not None else f"{device_type} measured"
    return Config(model=model, device_type=device_type, tps=tps, cp=cp, seq_length=seq, tokens=tokens,
                  primitives=primitives, sizes=sizes, group_sizes=group_sizes, warmup=warmup, iters=iters,
                  skip_compute=ns.skip_compute, name=name, output=output, layout=layout, dry_run=ns.dry_run,
                  warnings=warnings)


def format_bytes(size: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def plan_lines(cfg: Config, hostnames: Optional[Sequence[str]] = None) -> List[str]:
    """What a run measures, printed before it starts (and alone with --dry-run)."""
    m = cfg.model
    hosts = hostnames or assumed_hostnames(cfg.layout)
    lines = [f"model {m.name or m.file}: h {m.hidden_size}, FFN {m.ffn_hidden_size}{' SwiGLU' if m.swiglu else ' GeLU'}, "
             f"{m.num_attention_heads} heads, {m.num_query_groups} query groups, kv_channels {m.kv_channels}, "
             f"{m.normalization}, {m.precision}, sequence {cfg.seq_length}",
             f"ranks: {cfg.layout.world} ({cfg.layout.local_world} per node, {cfg.layout.nodes} node(s)); "
             f"device type {cfg.device_type}; {cfg.warmup} warm-up + {cfg.iters} timed iterations"]
    for tp in cfg.tps:
        s = layer_shards(m, tp)
        lines.append(f"compute tp {tp}: per rank QKV {s.qkv_weight[0]}x{s.qkv_weight[1]}"
                     f"{' (all-gathered over TP)' if s.qkv_gathered else ''}, proj {s.proj_weight[0]}x{s.proj_weight[1]}, "
                     f"FC1 {s.fc1_weight[0]}x{s.fc1_weight[1]}, FC2 {s.fc2_weight[0]}x{s.fc2_weight[1]}, "
                     f"{s.query_heads} query heads, {s.kv_groups} KV groups; tokens "
                     + ", ".join(f"{t} (mbs {micro_batch_size(t, cfg.seq_length, cfg.cp, tp)})" for t in cfg.tokens))
    for prim in cfg.primitives:
        if prim == "send_recv":
            for a, b, link in send_recv_pairs(hosts):
                lines.append(f"collective send_recv: ranks {a} and {b} ({link})")
            continue
        for g in cfg.group_sizes:
            links = sorted({link_class(grp, hosts) for grp in consecutive_groups(cfg.layout.world, g)})
            lines.append(f"collective {prim}: groups of {g} ranks ({', '.join(links)})")
    if cfg.primitives:
        lines.append("sizes: " + ", ".join(format_bytes(s) for s in cfg.sizes))
    return lines


def _prints_messages(env: Mapping[str, str]) -> bool:
    """Argument errors are printed once per node (local rank 0), not by every rank."""
    return env.get("LOCAL_RANK", "0") in ("0", "")


def main(argv: Optional[Sequence[str]] = None, env: Optional[Mapping[str, str]] = None) -> int:
    env = os.environ if env is None else env
    try:
        cfg = check_arguments(argv, env)
    except InputError as e:
        if _prints_messages(env):
            print(f"{PROG}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if cfg.dry_run:
        for w in cfg.warnings:
            print(f"{PROG}: warning: {w}", file=sys.stderr)
        for line in plan_lines(cfg):
            print(line)
        return EXIT_OK
    try:
        return measure(cfg)
    except MeasurementError as e:
        print(f"{PROG}: error: rank {cfg.layout.rank}: {e}", file=sys.stderr)
        return EXIT_FAILED


# === Measurement (imports torch) =====================================================================

def torch_version_ok(version: str) -> bool:
    """PyTorch 2.1 or newer."""
    m = re.match(r"^(\d+)\.(\d+)", version)
    return bool(m) and (int(m.group(1)), int(m.group(2))) >= (2, 1)


class _Accelerator:
    """CUDA and ROCm through torch.cuda (NCCL, RCCL), Ascend through torch_npu's torch.npu (HCCL)."""

    def __init__(self, torch):
        self.torch = torch
        self.kind = None
        npu_version = None
        try:
            import torch_npu  # noqa: F401  registers torch.npu and the "hccl" backend
            npu_version = getattr(torch_npu, "__version__", "?")
        except ImportError:
            pass
        except Exception as e:   # a broken CANN installation; fall back to CUDA when there is one
            print(f"{PROG}: warning: torch_npu did not import ({e})", file=sys.stderr)
        if npu_version is not None and hasattr(torch, "npu") and torch.npu.is_available():
            self.kind, self.module, self.backend = "npu", torch.npu, "hccl"
            self.library = f"torch_npu {npu_version}, HCCL"
        elif torch.cuda.is_available():
            self.kind, self.module, self.backend = "cuda", torch.cuda, "nccl"
            if getattr(torch.version, "hip", None):
                self.library = f"ROCm {torch.version.hip}, RCCL"
            else:
                try:
                    v = torch.cuda.nccl.version()
                    nccl = ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)
                except Exception:
                    nccl = "?"
                self.library = f"CUDA {torch.version.cuda}, NCCL {nccl}"
        else:
            raise MeasurementError("torch sees no CUDA, ROCm or Ascend device (is torch built for the accelerator? "
                                   "on Ascend, torch_npu must import)")
        self.device = None

    def set_device(self, local_rank: int) -> None:
        if local_rank >= self.module.device_count():
            raise MeasurementError(f"LOCAL_RANK {local_rank} but only {self.module.device_count()} devices are visible")
        self.module.set_device(local_rank)
        self.device = self.torch.device(f"{self.kind}:{local_rank}")

    def device_name(self) -> str:
        try:
            return str(self.module.get_device_name(self.device.index))
        except Exception:
            return self.kind

    def event(self):
        return self.module.Event(enable_timing=True)

    def synchronize(self) -> None:
        self.module.synchronize()

    def empty_cache(self) -> None:
        self.module.empty_cache()

    def is_out_of_memory(self, exc: BaseException) -> bool:
        oom = getattr(self.torch.cuda, "OutOfMemoryError", None)
        if oom is not None and isinstance(exc, oom):
            return True
        return "out of memory" in str(exc).lower()


def _make_ops(torch, dist):
    """Autograd functions for a layer sharded over a TP group with sequence parallelism, following
    Megatron-Core (megatron/core/tensor_parallel/layers.py and mappings.py): a column-parallel
    linear all-gathers its sequence-parallel input along the sequence, and in backward gathers it
    again for the weight gradient while the input gradient is computed, then reduce-scatters the
    input gradient while the weight gradient is computed; a row-parallel linear reduce-scatters
    its output along the sequence (all-gather in backward)."""

    def gathered_shape(x, size):
        return (x.shape[0] * size,) + tuple(x.shape[1:])

    class ReduceScatterSequence(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, group, size):
            ctx.group, ctx.size = group, size
            x = x.contiguous()
            out = x.new_empty((x.shape[0] // size,) + tuple(x.shape[1:]))
            dist.reduce_scatter_tensor(out, x, group=group)
            return out

        @staticmethod
        def backward(ctx, grad):
            grad = grad.contiguous()
            out = grad.new_empty(gathered_shape(grad, ctx.size))
            dist.all_gather_into_tensor(out, grad, group=ctx.group)
            return out, None, None

    class ColumnParallelLinear(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, bias, group, size):
            ctx.group, ctx.size, ctx.has_bias = group, size, bias is not None
            x = x.contiguous()
            full = x.new_empty(gathered_shape(x, size))
            dist.all_gather_into_tensor(full, x, group=group)
            out = torch.matmul(full, weight.t())
            if bias is not None:
                out = out + bias
            ctx.save_for_backward(x, weight)   # the shard, gathered again in backward
            return out

        @staticmethod
        def backward(ctx, grad):
            x, weight = ctx.saved_tensors
            grad = grad.contiguous()
            full = x.new_empty(gathered_shape(x, ctx.size))
            gather = dist.all_gather_into_tensor(full, x, group=ctx.group, async_op=True)
            grad_full = torch.matmul(grad, weight)
            gather.wait()
            grad_x = x.new_empty(x.shape)
            scatter = dist.reduce_scatter_tensor(grad_x, grad_full, group=ctx.group, async_op=True)
            grad_2d = grad.reshape(-1, grad.shape[-1])
            grad_weight = torch.matmul(grad_2d.t(), full.reshape(-1, full.shape[-1]))
            grad_bias = grad_2d.sum(dim=0) if ctx.has_bias else None
            scatter.wait()
            return grad_x, grad_weight, grad_bias, None, None

    class GatherLastDim(torch.autograd.Function):
        """All-gather along the last dimension (the QKV output when query groups < TP)."""

        @staticmethod
        def forward(ctx, x, group, size):
            ctx.group, ctx.size = group, size
            x = x.contiguous()
            buf = x.new_empty(gathered_shape(x, size))
            dist.all_gather_into_tensor(buf, x, group=group)
            parts = buf.view((size,) + tuple(x.shape))
            return parts.movedim(0, -2).reshape(tuple(x.shape[:-1]) + (size * x.shape[-1],))

        @staticmethod
        def backward(ctx, grad):
            size = ctx.size
            n = grad.shape[-1] // size
            stacked = grad.reshape(tuple(grad.shape[:-1]) + (size, n)).movedim(-2, 0).contiguous()
            out = grad.new_empty(tuple(grad.shape[:-1]) + (n,))
            dist.reduce_scatter_tensor(out, stacked.view((size * grad.shape[0],) + tuple(grad.shape[1:-1]) + (n,)),
                                       group=ctx.group)
            return out, None, None

    F = torch.nn.functional

    def column(x, weight, bias, group, size):
        if size == 1:
            return F.linear(x, weight, bias)
        return ColumnParallelLinear.apply(x, weight, bias, group, size)

    def row(x, weight, group, size):
        out = F.linear(x, weight)
        if size == 1:
            return out
        return ReduceScatterSequence.apply(out, group, size)

    def gather_last(x, group, size):
        return GatherLastDim.apply(x, group, size)

    return column, row, gather_last


class _Session:
    """One measurement run on every rank. Every rank runs the same sequence of collectives (the
    loops depend only on the arguments and the gathered host names); rank 0 writes the profile."""

    def __init__(self, torch, dist, accel: _Accelerator, cfg: Config):
        self.torch, self.dist, self.accel, self.cfg = torch, dist, accel, cfg
        self.rank = dist.get_rank()
        self.world = dist.get_world_size()
        self.device = accel.device
        self.dtype = torch.bfloat16 if cfg.model.precision == "bf16" else torch.float16
        self.notes: List[str] = []
        self._sync_buf = torch.zeros(1, device=self.device)
        self._groups: Dict[Tuple[int, ...], object] = {}
        self.column, self.row, self.gather_last = _make_ops(torch, dist)
        self.gqa_native = False

    # -- helpers --
    def log(self, text: str) -> None:
        if self.rank == 0:
            print(text, flush=True)

    def note(self, text: str) -> None:
        if self.rank == 0:
            self.notes.append(text)
            print(f"{PROG}: note: {text}", file=sys.stderr, flush=True)

    def group(self, ranks: Sequence[int]):
        """A process group of these ranks; every rank calls new_group for every group, in the same
        order, as torch.distributed requires. The whole world is the default group (None)."""
        key = tuple(ranks)
        if len(key) == self.world:
            return None
        if key not in self._groups:
            self._groups[key] = self.dist.new_group(list(key))
        return self._groups[key]

    def groups_of(self, size: int) -> Tuple[List[List[int]], List[object]]:
        ranks = consecutive_groups(self.world, size)
        return ranks, [self.group(r) for r in ranks]

    def sync(self) -> None:
        """Align the ranks before a timed iteration: device idle, one small all-reduce, idle."""
        self.accel.synchronize()
        self.dist.all_reduce(self._sync_buf)
        self.accel.synchronize()

    def all_ranks_ok(self, ok: bool) -> bool:
        flag = self.torch.tensor([0.0 if ok else 1.0], device=self.device)
        self.dist.all_reduce(flag, op=self.dist.ReduceOp.MAX)
        return flag.item() == 0.0

    def gather_series(self, values: Sequence[float]) -> List[List[float]]:
        t = self.torch.tensor(list(values), dtype=self.torch.float32, device=self.device)
        out = self.torch.empty(self.world * len(values), dtype=self.torch.float32, device=self.device)
        self.dist.all_gather_into_tensor(out, t)
        flat = out.tolist()
        n = len(values)
        return [flat[r * n:(r + 1) * n] for r in range(self.world)]

    def gather_hostnames(self) -> List[str]:
        codes = encode_hostname(socket.gethostname())
        t = self.torch.tensor(codes, dtype=self.torch.int32, device=self.device)
        out = self.torch.empty(self.world * HOSTNAME_WIDTH, dtype=self.torch.int32, device=self.device)
        self.dist.all_gather_into_tensor(out, t)
        return decode_hostnames(out.tolist())

    def timed(self, fn) -> List[float]:
        """Per-iteration device time of fn(), seconds, after the warm-up."""
        for _ in range(self.cfg.warmup):
            fn()
        times = []
        for _ in range(self.cfg.iters):
            self.sync()
            start, end = self.accel.event(), self.accel.event()
            start.record()
            fn()
            end.record()
            self.accel.synchronize()
            times.append(start.elapsed_time(end) * 1e-3)
        return times

    def timed_fwd_bwd(self, forward, backward, reset) -> Tuple[List[float], List[float]]:
        """Per-iteration forward and backward device times, seconds."""
        for _ in range(self.cfg.warmup):
            reset()
            backward(forward())
        fwd, bwd = [], []
        for _ in range(self.cfg.iters):
            reset()
            self.sync()
            e0, e1, e2 = self.accel.event(), self.accel.event(), self.accel.event()
            e0.record()
            out = forward()
            e1.record()
            backward(out)
            e2.record()
            self.accel.synchronize()
            fwd.append(e0.elapsed_time(e1) * 1e-3)
            bwd.append(e1.elapsed_time(e2) * 1e-3)
            del out
        return fwd, bwd

    # -- compute table --
    def detect_gqa(self) -> None:
        """Whether scaled_dot_product_attention takes enable_gqa (newer PyTorch); otherwise K and V
        are repeated to the query heads before the call, as Megatron-Core's unfused path does."""
        t = self.torch
        q = t.zeros(1, 2, 4, 8, device=self.device, dtype=self.dtype)
        kv = t.zeros(1, 1, 4, 8, device=self.device, dtype=self.dtype)
        try:
            t.nn.functional.scaled_dot_product_attention(q, kv, kv, is_causal=True, enable_gqa=True)
            self.gqa_native = True
        except (TypeError, RuntimeError):
            self.gqa_native = False

    def make_params(self, s: LayerShards):
        t, dev, dt = self.torch, self.device, self.dtype

        def weight(shape):
            return (t.randn(shape, device=dev, dtype=dt) * 0.02).requires_grad_()

        def vector(n, fill):
            if n == 0:
                return None
            return t.full((n,), fill, device=dev, dtype=dt).requires_grad_()

        return {"qkv_w": weight(s.qkv_weight), "qkv_b": vector(s.qkv_bias, 0.0),
                "proj_w": weight(s.proj_weight), "proj_b": vector(s.proj_bias, 0.0),
                "fc1_w": weight(s.fc1_weight), "fc1_b": vector(s.fc1_bias, 0.0),
                "fc2_w": weight(s.fc2_weight), "fc2_b": vector(s.fc2_bias, 0.0),
                "norm1_w": vector(s.norm_weight, 1.0), "norm1_b": vector(s.norm_bias, 0.0),
                "norm2_w": vector(s.norm_weight, 1.0), "norm2_b": vector(s.norm_bias, 0.0)}

    def layer_functions(self, p, s: LayerShards, group, tp: int, tp_rank: int, seq: int, mbs: int):
        """The layer and its FFN block on this rank, input and output [seq/tp, mbs, h] (Megatron's
        [s, b, h] layout, sequence-parallel)."""
        t = self.torch
        F = t.nn.functional
        m = self.cfg.model
        h, c = m.hidden_size, m.kv_channels
        column, row, gather_last = self.column, self.row, self.gather_last

        if m.normalization == "LayerNorm":
            def norm(x, w, b):
                return F.layer_norm(x, (h,), w, b, eps=1e-5)
        elif hasattr(F, "rms_norm"):
            def norm(x, w, b):
                return F.rms_norm(x, (h,), w, eps=1e-5)
        else:
            def norm(x, w, b):
                xf = x.float()
                return (xf * t.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * w

        rope = None
        if m.normalization == "RMSNorm":
            # Rotary position embedding (Su et al. 2021, RoFormer) on Q and K, as the RMSNorm
            # (LLaMA-style) models the cost model assumes use; LayerNorm (GPT) models add learned
            # positions at the embedding, outside the layer.
            inv = 1.0 / (10000.0 ** (t.arange(0, c, 2, device=self.device, dtype=t.float32) / c))
            angles = t.outer(t.arange(seq, device=self.device, dtype=t.float32), inv)
            angles = t.cat((angles, angles), dim=-1)[:, None, None, :]
            rope = (angles.cos().to(self.dtype), angles.sin().to(self.dtype))

        def rotate(x):
            if rope is None:
                return x
            cos, sin = rope
            x1, x2 = x.chunk(2, dim=-1)
            return x * cos + t.cat((-x2, x1), dim=-1) * sin

        def attention(x):
            qkv = column(x, p["qkv_w"], p["qkv_b"], group, tp)        # [seq, mbs, rows]
            if s.qkv_gathered:
                g = m.num_query_groups
                per_group_heads = m.num_attention_heads // g
                width = (per_group_heads + 2) * c
                qkv = gather_last(qkv, group, tp)                        # [seq, mbs, (a + 2g) c]
                gi = tp_rank // (tp // g)
                qkv = qkv[..., gi * width:(gi + 1) * width]
                q = qkv[..., :per_group_heads * c].reshape(seq, mbs, per_group_heads, c)
                j = tp_rank % (tp // g)
                q = q[:, :, j * s.query_heads:(j + 1) * s.query_heads]
                k = qkv[..., per_group_heads * c:(per_group_heads + 1) * c].reshape(seq, mbs, 1, c)
                v = qkv[..., (per_group_heads + 1) * c:].reshape(seq, mbs, 1, c)
            else:
                per_group_heads = s.query_heads // s.kv_groups
                qkv = qkv.view(seq, mbs, s.kv_groups, (per_group_heads + 2) * c)
                q, k, v = t.split(qkv, [per_group_heads * c, c, c], dim=-1)
                q = q.reshape(seq, mbs, s.query_heads, c)
            q, k = rotate(q), rotate(k)
            q, k, v = (y.permute(1, 2, 0, 3) for y in (q, k, v))        # [mbs, heads, seq, c]
            if k.shape[1] != q.shape[1]:
                if self.gqa_native:
                    out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
                else:
                    rep = q.shape[1] // k.shape[1]
                    out = F.scaled_dot_product_attention(q, k.repeat_interleave(rep, dim=1),
                                                         v.repeat_interleave(rep, dim=1), is_causal=True)
            else:
                out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            out = out.permute(2, 0, 1, 3).reshape(seq, mbs, s.query_heads * c)
            out = row(out, p["proj_w"], group, tp)                       # [seq/tp, mbs, h]
            return out if p["proj_b"] is None else out + p["proj_b"]

        def ffn(x):
            z = column(x, p["fc1_w"], p["fc1_b"], group, tp)             # [seq, mbs, gl F / tp]
            if m.swiglu:
                gate, up = z.chunk(2, dim=-1)
                z = F.silu(gate) * up
            else:
                z = F.gelu(z)
            out = row(z, p["fc2_w"], group, tp)                          # [seq/tp, mbs, h]
            return out if p["fc2_b"] is None else out + p["fc2_b"]

        def layer(x):
            x = x + attention(norm(x, p["norm1_w"], p["norm1_b"]))
            return x + ffn(norm(x, p["norm2_w"], p["norm2_b"]))

        return layer, ffn

    def measure_case(self, params, s: LayerShards, group, tp: int, tokens: int):
        t = self.torch
        m = self.cfg.model
        seq = self.cfg.seq_length // self.cfg.cp
        mbs = micro_batch_size(tokens, self.cfg.seq_length, self.cfg.cp, tp)
        layer, ffn = self.layer_functions(params, s, group, tp, self.rank % tp, seq, mbs)
        shape = (seq // tp, mbs, m.hidden_size)
        x = t.randn(shape, device=self.device, dtype=self.dtype).requires_grad_()
        grad = t.randn(shape, device=self.device, dtype=self.dtype)
        tensors = [v for v in params.values() if v is not None] + [x]

        def reset():
            for v in tensors:
                v.grad = None

        def backward(out):
            out.backward(grad)

        layer_fwd, layer_bwd = self.timed_fwd_bwd(lambda: layer(x), backward, reset)
        ffn_fwd, ffn_bwd = self.timed_fwd_bwd(lambda: ffn(x), backward, reset)
        reset()
        return layer_fwd, layer_bwd, ffn_fwd, ffn_bwd

    def measure_compute(self, hostnames: Sequence[str]) -> List[dict]:
        cfg = self.cfg
        entries: List[dict] = []
        self.detect_gqa()
        for tp in cfg.tps:
            ranks = consecutive_groups(self.world, tp)
            group = self.groups_of(tp)[1][self.rank // tp] if tp > 1 else None   # TP 1 needs no group
            if any(link_class(r, hostnames) != INTRA_NODE for r in ranks):
                self.note(f"TP groups of {tp} ranks span hosts (host names disagree with LOCAL_WORLD_SIZE); "
                          "their layer times include inter-node traffic")
            s = layer_shards(cfg.model, tp)
            params = None
            for tokens in cfg.tokens:
                ok, times = True, None
                try:
                    if params is None:
                        params = self.make_params(s)
                    times = self.measure_case(params, s, group, tp, tokens)
                except Exception as e:   # out of memory skips the entry; anything else stops the run
                    if not self.accel.is_out_of_memory(e):
                        raise
                    ok = False
                    params = None
                    self.accel.empty_cache()
                if not self.all_ranks_ok(ok):
                    self.note(f"tp {tp} tokens {tokens}: out of device memory on at least one rank; entry skipped")
                    continue
                series = [self.gather_series(v) for v in times]
                if self.rank == 0:
                    (lf, _, lf_hi), (lb, _, lb_hi), (ff, _, _), (fb, _, _) = (aggregate_times(v, ranks) for v in series)
                    entry, notes = compute_entry(cfg.device_type, tp, cfg.cp, tokens, lf, lb, ff, fb)
                    for n in notes:
                        self.note(n)
                    entries.append(entry)
                    spread = f"; slowest of {len(ranks)} groups {lf_hi * 1e3:.3f} / {lb_hi * 1e3:.3f} ms" if len(ranks) > 1 else ""
                    self.log(f"compute tp {tp} tokens {tokens}: layer fwd {lf * 1e3:.3f} ms bwd {lb * 1e3:.3f} ms, "
                             f"FFN fwd {ff * 1e3:.3f} ms bwd {fb * 1e3:.3f} ms{spread}")
            params = None
            self.accel.empty_cache()
        return entries

    # -- collectives table --
    def collective_op(self, primitive: str, send, recv, group):
        dist = self.dist
        if primitive == "all_reduce":
            return lambda: dist.all_reduce(send, group=group)
        if primitive == "all_gather":
            return lambda: dist.all_gather_into_tensor(recv, send, group=group)
        if primitive == "reduce_scatter":
            return lambda: dist.reduce_scatter_tensor(recv, send, group=group)
        if primitive == "all_to_all":
            return lambda: dist.all_to_all_single(recv, send, group=group)
        raise ValueError(primitive)

    def measure_collectives(self, hostnames: Sequence[str]) -> List[dict]:
        cfg, t = self.cfg, self.torch
        entries: List[dict] = []
        for primitive in [p for p in cfg.primitives if p != "send_recv"]:
            for g in cfg.group_sizes:
                ranks, handles = self.groups_of(g)
                group = handles[self.rank // g]
                links = [link_class(r, hostnames) for r in ranks]
                for size, plan in distinct_buffer_plans(primitive, cfg.sizes, g, self.note):
                    send_n, recv_n, measured = plan
                    send = t.zeros(send_n, dtype=t.float32, device=self.device)
                    recv = send if primitive == "all_reduce" else t.empty(recv_n, dtype=t.float32, device=self.device)
                    times = self.timed(self.collective_op(primitive, send, recv, group))
                    del send, recv
                    series = self.gather_series(times)
                    if self.rank == 0:
                        for link in sorted(set(links)):
                            chosen = [r for r, lk in zip(ranks, links) if lk == link]
                            med, _, hi = aggregate_times(series, chosen)
                            entries.append(collective_entry(primitive, link, g, measured, med, cfg.device_type))
                            self.log(f"{primitive} {link} {g} ranks {format_bytes(measured)}: {med * 1e3:.4f} ms, "
                                     f"busbw {bus_bandwidth(primitive, measured, g, med):.1f} GB/s")
        if "send_recv" in cfg.primitives:
            for a, b, link in send_recv_pairs(hostnames):
                pair_group = self.group([a, b])
                for size, (send_n, recv_n, measured) in distinct_buffer_plans("send_recv", cfg.sizes, 2, self.note):
                    if self.rank in (a, b):
                        peer = b if self.rank == a else a
                        send = t.zeros(send_n, dtype=t.float32, device=self.device)
                        recv = t.empty(recv_n, dtype=t.float32, device=self.device)

                        def exchange(send=send, recv=recv, peer=peer):
                            # Both ranks send and receive at once, as nccl-tests' sendrecv does.
                            ops = [self.dist.P2POp(self.dist.isend, send, peer, group=pair_group),
                                   self.dist.P2POp(self.dist.irecv, recv, peer, group=pair_group)]
                            for req in self.dist.batch_isend_irecv(ops):
                                req.wait()
                        times = self.timed(exchange)
                        del send, recv
                    else:
                        times = self.timed(lambda: None)
                    series = self.gather_series(times)
                    if self.rank == 0:
                        med, _, _ = aggregate_times(series, [[a, b]])
                        entries.append(collective_entry("send_recv", link, 2, measured, med, cfg.device_type))
                        self.log(f"send_recv {link} ranks {a},{b} {format_bytes(measured)}: {med * 1e3:.4f} ms, "
                                 f"busbw {bus_bandwidth('send_recv', measured, 2, med):.1f} GB/s")
        return entries

    # -- the run --
    def run(self) -> int:
        cfg = self.cfg
        self.torch.manual_seed(1234 + self.rank)
        hostnames = self.gather_hostnames()
        hosts = sorted(set(hostnames))
        per_host = {h: hostnames.count(h) for h in hosts}
        if len(hosts) != cfg.layout.nodes or any(n != cfg.layout.local_world for n in per_host.values()):
            self.note(f"{len(hosts)} host names for {cfg.layout.nodes} torchrun node(s) of {cfg.layout.local_world} "
                      "ranks; link classes follow the host names")
        for w in cfg.warnings:
            self.note(w)
        for line in plan_lines(cfg, hostnames):
            self.log(line)
        self.log(f"devices: {self.accel.device_name()}; torch {self.torch.__version__}, {self.accel.library}")
        compute = [] if cfg.skip_compute else self.measure_compute(hostnames)
        collectives = self.measure_collectives(hostnames) if cfg.primitives else []
        status = EXIT_OK
        if self.rank == 0 and not compute and not collectives:
            print(f"{PROG}: error: nothing was measured (every entry was skipped); {cfg.output} not written",
                  file=sys.stderr)
            status = EXIT_FAILED
        elif self.rank == 0:
            source = make_source(cfg.device_type, self.accel.device_name(), self.world, len(hosts),
                                 self.torch.__version__, self.accel.library,
                                 datetime.datetime.now(datetime.timezone.utc), cfg.model.name or cfg.model.file,
                                 cfg.warmup, cfg.iters)
            doc = assemble_profile(cfg.name, source, compute, collectives)
            try:
                write_json_atomically(cfg.output, doc)
                print(f"wrote {cfg.output}: {len(compute)} compute and {len(collectives)} collective entries; "
                      f"check it with: hapmoe validate {cfg.output}", flush=True)
            except OSError as e:
                print(f"{PROG}: error: {cfg.output}: cannot write: {e.strerror}", file=sys.stderr)
                status = EXIT_FAILED
        self.sync()
        return status


def _rendezvous_defaults(env, layout: Layout) -> None:
    """A single process started without torchrun joins a one-rank group on this host."""
    if layout.world == 1 and not env.get("MASTER_ADDR"):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env.setdefault("MASTER_ADDR", "127.0.0.1")
        env.setdefault("MASTER_PORT", str(port))
        env.setdefault("RANK", "0")
        env.setdefault("WORLD_SIZE", "1")


def measure(cfg: Config) -> int:
    # Megatron-LM requires one hardware queue on CUDA when TP > 1, so that collectives are
    # scheduled in issue order next to the GEMMs they overlap (validate_args).
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        raise MeasurementError(f"cannot import torch ({e}); the measurement needs PyTorch 2.1 or newer") from None
    if not torch_version_ok(torch.__version__):
        raise MeasurementError(f"torch {torch.__version__} is too old; PyTorch 2.1 or newer is needed")
    if not dist.is_available():
        raise MeasurementError("this torch build has no torch.distributed")
    accel = _Accelerator(torch)
    accel.set_device(cfg.layout.local_rank)
    _rendezvous_defaults(os.environ, cfg.layout)
    dist.init_process_group(backend=accel.backend)
    try:
        return _Session(torch, dist, accel, cfg).run()
    finally:
        try:
            dist.destroy_process_group()
        except Exception:
            pass


if __name__ == "__main__":
    sys.exit(main())
