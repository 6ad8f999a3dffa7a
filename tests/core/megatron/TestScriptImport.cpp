// Script import: launch scripts laid out like Megatron-LM's examples (mixtral, gpt3, llama)
// give back every parallel knob and model field; bash expansion rules; nothing executed.

#include "MegatronTestUtil.h"

#include "io/Documents.h"
#include "megatron/BashReader.h"
#include "megatron/LauncherExport.h"
#include "megatron/ScriptImport.h"
#include "plan/Deployability.h"

#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <fstream>
#include <iterator>

using namespace hapmoe;

namespace {

const ScriptFlag* findFlag(const ImportedScript& s, const std::string& name)
{
    for (const ScriptFlag& f : s.other_flags)
        if (f.name == name)
            return &f;
    return nullptr;
}

bool hasWarning(const ImportedScript& s, const std::string& part)
{
    return std::any_of(s.warnings.begin(), s.warnings.end(), [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

// What validateScriptModel says of an inline script: the error, or "accepted".
std::string refusalOf(const std::string& script, const std::string& file, const ScriptInputs& inputs = {})
{
    try {
        validateScriptModel(importMegatronScript(script, file, inputs));
    } catch (const InputError& e) {
        return e.what();
    }
    return "accepted";
}

// The launch command's arguments after the entry script, for small inline scripts.
std::vector<std::string> argsOf(const std::string& script)
{
    BashReader r("inline.sh");
    r.read(script);
    for (const ShellCommand& c : r.commands())
        if (!c.words.empty() && c.words.front() == "torchrun")
            return std::vector<std::string>(c.words.begin() + 2, c.words.end());
    return {};
}

// The start of a one-node launch of a LLaMA-7B-sized model, for tests that add a flag or two.
std::string llamaLaunch()
{
    return "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
           "--seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 ";
}

// Reference section 9's heterogeneous example as a launch command, with extra flags: two
// nodes of 8, meshes TP2 DP4 and TP4 DP2 (PP 1 each), split 18 14, MBS 1, GBS 16.
std::string heteroScript(const std::string& extra)
{
    return "torchrun --nnodes 2 --nproc_per_node 8 flagscale/train/train_gpt.py --num-layers 32 --hidden-size 4096 "
           "--num-attention-heads 32 --seq-length 4096 --bf16 --untie-embeddings-and-output-weights "
           "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 16 "
           "--sequence-parallel "
           + extra
           + "--enable-hetero --hetero-use-cpu-communication --hetero-pipeline-layer-split 18 14 "
             "--hetero-process-meshes 2 1 1 4 1 4 1 1 2 1 --hetero-device-types H800 A100 --hetero-current-device-type H800\n";
}

// What bash prints running the script with an empty environment and no arguments.
std::string bashOutput(const std::string& script)
{
    QTemporaryDir dir;
    QByteArray out;
    if (test::runBash({QStringLiteral("-c"), QString::fromStdString(script)}, dir.path(), &out, QProcessEnvironment()) != 0)
        return "bash failed: " + out.toStdString();
    return out.toStdString();
}

// What bash itself prints for `printf '<%s>' WORDS END` after the preamble, run with an empty
// environment; and what the reader makes of the same command. Equal when the reader expands
// WORDS as bash does (END marks the end, so that no words at all differ from one empty word).
std::string bashPrints(const std::string& preamble, const std::string& words)
{
    return bashOutput(preamble + "\nprintf '<%s>' " + words + " END\n");
}

// The arguments of every torchrun the script runs, one line a run, "<arg>" each: bash's with
// torchrun a function that prints them (its own errors, such as `local` outside a function,
// not shown, and the script's status, also that of an `exit` in it, not taken for a failure),
// and the reader's torchrun commands.
std::string bashLaunchesWith(const std::string& script, const ScriptInputs& inputs);

std::string bashLaunches(const std::string& script)
{
    return bashLaunchesWith(script, {});
}

// As bashLaunches, with the script run as `NAME=VALUE ... bash -c SCRIPT inline.sh ARG...`; and
// the reader given the same arguments and environment.
std::string bashLaunchesWith(const std::string& script, const ScriptInputs& inputs)
{
    QTemporaryDir dir;
    QStringList args{QStringLiteral("-c"), QString::fromStdString("exec 2>/dev/null\ntrap 'exit 0' EXIT\ntorchrun() { printf '<%s>' \"$@\"; "
                                                                  "printf '\\n'; }\n" + script + "\nexit 0\n"),
                     QStringLiteral("inline.sh")};
    for (const std::string& a : inputs.arguments)
        args << QString::fromStdString(a);
    QProcessEnvironment env;
    for (const auto& [name, value] : inputs.environment)
        env.insert(QString::fromStdString(name), QString::fromStdString(value));
    QByteArray out;
    if (test::runBash(args, dir.path(), &out, env) != 0)
        return "bash failed: " + out.toStdString();
    return out.toStdString();
}

std::string readerLaunchesWith(const std::string& script, const ScriptInputs& inputs)
{
    BashReader r("inline.sh");
    if (!inputs.arguments.empty())
        r.setArguments(inputs.arguments);
    r.setEnvironment(inputs.environment);
    r.read(script);
    std::string out;
    for (const ShellCommand& c : r.commands()) {
        if (c.words.front() != "torchrun")
            continue;
        for (std::size_t k = 1; k < c.words.size(); ++k)
            out += "<" + c.words[k] + ">";
        out += "\n";
    }
    return out;
}

std::string readerLaunches(const std::string& script)
{
    return readerLaunchesWith(script, {});
}

bool readerWarnsWith(const std::string& script, const ScriptInputs& inputs, const std::string& part)
{
    BashReader r("inline.sh");
    if (!inputs.arguments.empty())
        r.setArguments(inputs.arguments);
    r.setEnvironment(inputs.environment);
    r.read(script);
    return std::any_of(r.warnings().begin(), r.warnings().end(), [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

bool readerWarns(const std::string& script, const std::string& part)
{
    return readerWarnsWith(script, {}, part);
}

// The reader's warnings that contain `part`.
std::vector<std::string> warningsWith(const std::string& script, const std::string& part)
{
    BashReader r("inline.sh");
    r.read(script);
    std::vector<std::string> out;
    std::copy_if(r.warnings().begin(), r.warnings().end(), std::back_inserter(out),
                 [&](const std::string& w) { return w.find(part) != std::string::npos; });
    return out;
}

// The first of the scripts whose launch commands the reader and bash disagree on, with both
// readings; "" when they agree on all.
std::string firstDifferenceFromBash(const std::vector<std::string>& scripts)
{
    for (const std::string& script : scripts) {
        const std::string bash = bashLaunches(script), reader = readerLaunches(script);
        if (bash != reader)
            return script + "bash: " + bash + "reader: " + reader;
    }
    return {};
}

std::string readerPrints(const std::string& preamble, const std::string& words)
{
    BashReader r("inline.sh");
    r.read(preamble + "\nprintf '<%s>' " + words + " END\n");
    std::string out;
    const ShellCommand& c = r.commands().back();
    for (std::size_t k = 2; k < c.words.size(); ++k)
        out += "<" + c.words[k] + ">";
    return out;
}

// The value bash leaves in a variable after the preamble ("<unset>" when it is unset), and the
// reader's.
std::string bashValue(const std::string& preamble, const std::string& name)
{
    return bashPrints(preamble, "\"${" + name + "-<unset>}\"");
}

std::string readerValue(const std::string& preamble, const std::string& name)
{
    BashReader r("inline.sh");
    r.read(preamble + "\n");
    const auto it = r.variables().find(name);
    return it == r.variables().end() ? "<<unset>><END>" : "<" + it->second + "><END>";
}

} // namespace

class TestScriptImport : public QObject {
    Q_OBJECT

private slots:
    void mixtralStyleScript()
    {
        const ImportedScript s = importMegatronScriptFile(test::dataFile("train_mixtral_8x7b_distributed.sh"));
        QCOMPARE(s.launcher, std::string("torchrun"));
        QCOMPARE(s.entry_script, std::string("pretrain_gpt.py"));
        // NNODES=${SLURM_NNODES:-"4"}, GPUS_PER_NODE=8
        QCOMPARE(s.nnodes, 4);
        QCOMPARE(s.nproc_per_node, 8);
        QCOMPARE(s.world_size, 32);
        QCOMPARE(s.master_addr, std::string("localhost"));
        QCOMPARE(s.master_port, std::string("6000"));
        const ParallelConfig& p = s.parallel;
        QCOMPARE(p.tp, 1);
        QCOMPARE(p.pp, 4);
        QCOMPARE(p.cp, 1);
        QCOMPARE(p.ep, 8);
        QCOMPARE(p.etp, 0);   // not given: Megatron uses TP
        QCOMPARE(p.vpp, 1);
        QCOMPARE(p.recompute, Recompute::Full);
        QCOMPARE(p.recompute_method, std::string("uniform"));
        QCOMPARE(p.recompute_layers, 0);   // uniform: every layer
        QVERIFY(p.distributed_optimizer);
        QVERIFY(p.sequence_parallel);
        QCOMPARE(p.micro_batch_size, 1);
        QCOMPARE(p.global_batch_size, 256);
        const ModelSpec& m = s.model;
        QCOMPARE(m.num_layers, 32);
        QCOMPARE(m.hidden_size, 4096);
        QCOMPARE(m.ffn_hidden_size, 14336);
        QCOMPARE(m.num_attention_heads, 32);
        QCOMPARE(m.num_query_groups, 8);
        QCOMPARE(m.seq_length, 4096);
        QCOMPARE(m.max_position_embeddings, 32768);
        QVERIFY(m.swiglu);
        QVERIFY(!m.add_bias_linear);
        QVERIFY(m.untie_embeddings_and_output_weights);
        QCOMPARE(m.normalization, std::string("RMSNorm"));
        // --attention-dropout 0.0 --hidden-dropout 0.0: no masks kept (docs/cost-model.md 5.2).
        QCOMPARE(m.attention_dropout, 0.0);
        QCOMPARE(m.hidden_dropout, 0.0);
        QVERIFY(!findFlag(s, "--attention-dropout") && !findFlag(s, "--hidden-dropout"));
        QCOMPARE(m.num_experts, 8);
        QCOMPARE(m.moe_router_topk, 2);
        QCOMPARE(m.moe_token_dispatcher_type, TokenDispatcher::AllToAll);
        QCOMPARE(m.training.precision, Precision::BF16);
        QCOMPARE(m.training.global_batch_size, 256);
        // Exported variables, with the default expanded.
        QVERIFY(std::find(s.environment.begin(), s.environment.end(), "CUDA_DEVICE_MAX_CONNECTIONS=1") != s.environment.end());
        QVERIFY(std::find(s.environment.begin(), s.environment.end(), "NCCL_IB_QPS_PER_CONNECTION=4") != s.environment.end());
        // Other flags verbatim; the W&B block's condition is false (the key is not set).
        QVERIFY(findFlag(s, "--save"));
        QCOMPARE(findFlag(s, "--save")->values, std::vector<std::string>{"/checkpoints/mixtral-8x7b"});
        QCOMPARE(findFlag(s, "--tensorboard-dir")->values, std::vector<std::string>{"/checkpoints/mixtral-8x7b/tensorboard"});
        QCOMPARE(findFlag(s, "--moe-aux-loss-coeff")->values, std::vector<std::string>{"1e-2"});
        QVERIFY(findFlag(s, "--no-load-rng"));
        QVERIFY(!findFlag(s, "--wandb-project"));
        QCOMPARE(s.skipped_by_test.size(), std::size_t(1));   // and said (testsOnTheEnvironmentAreSaid)
        QCOMPARE(s.skipped_by_test.front().line, 108);
        QCOMPARE(s.skipped_by_test.front().name, std::string("LOGGING_ARGS"));
        QVERIFY(hasWarning(s, "line 108: as the script is read, a test that depends on WANDB_API_KEY"));
        QVERIFY(!findFlag(s, "--num-layers"));   // mapped, not kept twice
        QVERIFY(hasWarning(s, "vocabulary"));
    }

    void gpt3StyleScript()
    {
        const ImportedScript s = importMegatronScriptFile(test::dataFile("train_gpt3_175b_distributed.sh"));
        QCOMPARE(s.nnodes, 16);
        QCOMPARE(s.nproc_per_node, 8);
        QCOMPARE(s.world_size, 128);
        QCOMPARE(s.parallel.tp, 8);
        QCOMPARE(s.parallel.pp, 16);
        QCOMPARE(s.parallel.global_batch_size, 1536);
        QVERIFY(!s.parallel.distributed_optimizer);
        QCOMPARE(s.parallel.recompute, Recompute::None);
        // GPT-3 175B (Brown et al. 2020, table 2.1) and Megatron's defaults: FFN 4h, bias on,
        // LayerNorm, tied embeddings, GPT-2 BPE vocabulary (merge file) of 50257.
        QCOMPARE(s.model.num_layers, 96);
        QCOMPARE(s.model.hidden_size, 12288);
        QCOMPARE(s.model.ffn_hidden_size, 4 * 12288);
        QCOMPARE(s.model.num_attention_heads, 96);
        QCOMPARE(s.model.num_query_groups, 0);
        QCOMPARE(s.model.seq_length, 2048);
        QVERIFY(s.model.add_bias_linear);
        QVERIFY(!s.model.untie_embeddings_and_output_weights);
        QCOMPARE(s.model.normalization, std::string("LayerNorm"));
        QCOMPARE(s.model.vocab_size, 50257);
        QCOMPARE(s.model.training.precision, Precision::FP16);
        QVERIFY(!s.model.isMoe());
        // A comment after a value inside an array is not a value.
        QCOMPARE(findFlag(s, "--attention-backend")->values, std::vector<std::string>{"auto"});
        QCOMPARE(findFlag(s, "--rampup-batch-size")->values, (std::vector<std::string>{"16", "16", "5859375"}));
        QCOMPARE(findFlag(s, "--lr-warmup-fraction")->values, std::vector<std::string>{".001"});
        // Positional parameters are unknown when reading: kept as ${ARGn} and reported.
        QCOMPARE(findFlag(s, "--data-path")->values, std::vector<std::string>{"${ARG5}"});
        QCOMPARE(findFlag(s, "--save")->values, std::vector<std::string>{"${ARG1}"});
        QVERIFY(hasWarning(s, "positional parameter $5"));
    }

    void llamaStyleScript()
    {
        const ImportedScript s = importMegatronScriptFile(test::dataFile("train_llama3_8b.sh"));
        QCOMPARE(s.launcher, std::string("python -m torch.distributed.run"));
        QCOMPARE(s.entry_script, std::string("pretrain_gpt.py"));
        QCOMPARE(s.nnodes, 2);
        QCOMPARE(s.nproc_per_node, 8);   // --nproc-per-node spelling
        QCOMPARE(s.world_size, 16);
        QCOMPARE(s.parallel.tp, 2);
        QCOMPARE(s.parallel.cp, 2);
        QCOMPARE(s.parallel.pp, 1);
        QCOMPARE(s.parallel.recompute, Recompute::Selective);   // --recompute-activations
        QVERIFY(s.parallel.sequence_parallel);
        QVERIFY(s.parallel.distributed_optimizer);               // appended via "${DDP_ARGS[@]}"
        QCOMPARE(s.parallel.global_batch_size, 128);
        // Llama 3 8B (Meta model card): 32 layers, 4096 hidden, 14336 FFN, 32 heads, 8 KV heads.
        QCOMPARE(s.model.num_layers, 32);
        QCOMPARE(s.model.ffn_hidden_size, 14336);
        QCOMPARE(s.model.num_query_groups, 8);
        QCOMPARE(s.model.kv_channels, 128);
        QCOMPARE(s.model.seq_length, 8192);
        // From the taken (mock data) branch: the NullTokenizer's 128256, its end-of-document
        // token the last id (Megatron-LM d98e8a64's NullTokenizer has exactly the size given,
        // megatron/core/tokenizers/text/libraries/null_tokenizer.py).
        QCOMPARE(s.model.vocab_size, 128256);
        QCOMPARE(s.model.training.precision, Precision::BF16);
        // DTYPE="bf16": the elif branch runs (its --grad-reduce-in-bf16 gives bf16 gradients),
        // the fp8 one does not.
        QCOMPARE(s.model.training.accumulate_allreduce_grads_in_fp32, std::optional<bool>(false));
        QVERIFY(!findFlag(s, "--fp8-format"));
        QVERIFY(findFlag(s, "--mock-data"));
        QVERIFY(!findFlag(s, "--data-path"));
        // "--split '99,1,0'" as one array element: bash splits it and keeps the quotes.
        QCOMPARE(findFlag(s, "--split")->values, std::vector<std::string>{"'99,1,0'"});
        QVERIFY(hasWarning(s, "quote characters"));
        // ${1:-"checkpoints/llama3_8b"}: the default.
        QCOMPARE(findFlag(s, "--save")->values, std::vector<std::string>{"checkpoints/llama3_8b"});
        // ${PWD} comes from the environment: kept literal and reported.
        QCOMPARE(findFlag(s, "--data-cache-path")->values, std::vector<std::string>{"${PWD}/cache_llama3_8b"});
        QVERIFY(hasWarning(s, "PWD is not set"));
    }

    void parameterExpansion()
    {
        BashReader r("inline.sh");
        r.read("A=1\nE=\n"
               "B=${A:-x} C=${UNSET:-y} D=${E:-z} F=${E-w} G=${A:+alt} H=${UNSET:+alt}\n"
               "I=${J:=assigned}\n"
               "K=$((2 * 3 + ${A}))\n"
               "P=/a/b/c.txt; Q=${P##*/}; R=${P%.txt}\n");
        const auto& v = r.variables();
        QCOMPARE(v.at("B"), std::string("1"));
        QCOMPARE(v.at("C"), std::string("y"));
        QCOMPARE(v.at("D"), std::string("z"));
        QCOMPARE(v.at("F"), std::string(""));   // ${E-w}: E is set (empty), no default
        QCOMPARE(v.at("G"), std::string("alt"));
        QCOMPARE(v.at("H"), std::string(""));
        QCOMPARE(v.at("I"), std::string("assigned"));
        QCOMPARE(v.at("J"), std::string("assigned"));
        QCOMPARE(v.at("K"), std::string("7"));
        QCOMPARE(v.at("Q"), std::string("c.txt"));
        QCOMPARE(v.at("R"), std::string("/a/b/c"));
    }

    void arithmeticSaysWhyItFails()
    {
        // What bash would stop at or that is not read here is named in the warning, and a flag
        // whose value it was is refused with that warning printed before the error.
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"32/0", "division by 0, where bash stops the script"},
            {"2**63", "an exponent below 0 or above 62"},
            {"99999999999999999999", "a number beyond 64 bits"},
            {"NOT_SET * 2", "NOT_SET has no number here"},
            {"X + 1", "NOT_SET has no number here"},   // X=$NOT_SET*2: the innermost reason
            {"3 @ 2", "\"@ 2\" is not read here"},
        };
        for (const auto& [expr, why] : cases) {
            BashReader r("a.sh");
            r.read("X='NOT_SET*2'\nN=$((" + expr + "))\n");
            const std::string expected = "line 2: arithmetic $((" + expr + ")) could not be evaluated (" + why;
            QVERIFY2(std::any_of(r.warnings().begin(), r.warnings().end(),
                                 [&](const std::string& w) { return w.rfind(expected, 0) == 0; }),
                     expected.c_str());
        }
        // What bash does not evaluate raises nothing: the right of a decided || or &&, and the
        // ?: branch not taken (bash gives 1, 0 and 0 here, with X=0 and NOT_SET unset).
        BashReader shortCircuit("s.sh");
        shortCircuit.read("X=0\nA=$(( X == 0 || 10 / X ))\nB=$(( X ? 10 / X : 0 ))\nC=$(( X && NOT_SET ))\n");
        QCOMPARE(shortCircuit.variables().at("A"), std::string("1"));
        QCOMPARE(shortCircuit.variables().at("B"), std::string("0"));
        QCOMPARE(shortCircuit.variables().at("C"), std::string("0"));
        QVERIFY(shortCircuit.warnings().empty());
    }

    void arithmeticOperatorsAsBash()
    {
        // Each expected value is what bash 5.2 on x86-64 prints for echo $((EXPR)): shifts take
        // their count modulo 64 and >> keeps the sign; < > bind tighter than == !=, which bind
        // tighter than & ^ |; ~ and unary minus bind tighter than **.
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"1<<20", "1048576"},
            {"SEQ << 2", "16384"},
            {"1<<64", "1"},
            {"1<<-1", "-9223372036854775808"},
            {"-8>>1", "-4"},
            {"1<<3+1", "16"},
            {"1 == 2 > 1", "1"},
            {"5 & 3 | 8 ^ 2", "11"},
            {"6 & 3 == 3", "0"},
            {"~0", "-1"},
            {"~1**2", "4"},
            {"SEQ > 4096 && SEQ >> 12 == 1 || 0", "0"},
            {"SEQ >= 4096 && (SEQ >> 12) == 1", "1"},
        };
        for (const auto& [expr, value] : cases) {
            BashReader r("a.sh");
            r.read("SEQ=4096\nN=$((" + expr + "))\n");
            QVERIFY2(r.warnings().empty(), expr.c_str());
            QCOMPARE(r.variables().at("N"), value);
        }
        // The arithmetic command and a test read the same operators.
        BashReader command("c.sh");
        command.read("SEQ=4096\nif (( SEQ >> 12 == 1 && (SEQ & 4095) == 0 )); then A=yes; else A=no; fi\n");
        QCOMPARE(command.variables().at("A"), std::string("yes"));
        QVERIFY(command.warnings().empty());
    }

    void conditions()
    {
        BashReader r("inline.sh");
        r.read("N=4\n"
               "if [ \"$N\" -gt 2 ] && [[ -z \"$UNSET\" ]]; then A=big; elif [ \"$N\" -eq 4 ]; then A=four; else A=small; fi\n"
               "if [ \"$N\" == 3 ]; then B=three\nelif test \"$N\" != 3; then B=other\nfi\n"
               "if [ -f /some/file ]; then C=maybe; fi\n"
               "if [ -n \"$N\" ]; then\n  if [ -z \"$N\" ]; then D=inner; else D=outer; fi\nfi\n");
        const auto& v = r.variables();
        QCOMPARE(v.at("A"), std::string("big"));
        QCOMPARE(v.at("B"), std::string("other"));
        QCOMPARE(v.at("D"), std::string("outer"));
        // A file test cannot be decided from the text: the branch is read, with a warning.
        QCOMPARE(v.at("C"), std::string("maybe"));
        QVERIFY(std::any_of(r.warnings().begin(), r.warnings().end(),
                            [](const std::string& w) { return w.find("C is set in a branch") != std::string::npos; }));
    }

    void arrayExpansion()
    {
        // Unquoted: every element split again; "${A[@]}": one word per element; "${A[*]}": one word.
        const std::string defs = "A=(\"--split 1,2\" --x # a comment\n  'y z'\n)\n";
        QCOMPARE(argsOf(defs + "torchrun e.py ${A[@]}\n"), (std::vector<std::string>{"--split", "1,2", "--x", "y", "z"}));
        QCOMPARE(argsOf(defs + "torchrun e.py \"${A[@]}\"\n"), (std::vector<std::string>{"--split 1,2", "--x", "y z"}));
        QCOMPARE(argsOf(defs + "torchrun e.py \"${A[*]}\"\n"), (std::vector<std::string>{"--split 1,2 --x y z"}));
        QCOMPARE(argsOf(defs + "B=()\ntorchrun e.py \"${B[@]}\" end\n"), (std::vector<std::string>{"end"}));
        QCOMPARE(argsOf(defs + "A+=(--more)\ntorchrun e.py ${#A[@]} ${A[3]}\n"), (std::vector<std::string>{"4", "--more"}));
        // Line continuations and a comment at the end of the command.
        QCOMPARE(argsOf("torchrun e.py \\\n  --a 1 \\\n  --b 2 # done\n"), (std::vector<std::string>{"--a", "1", "--b", "2"}));
    }

    void flagForms()
    {
        const ImportedScript s = importMegatronScript(
            "torchrun --nproc_per_node=4 --nnodes=2 pretrain_gpt.py --num-layers=8 --hidden-size 512 "
            "--num-attention-heads 8 --seq-length 1024 --max-position-embeddings 1024 --bf16 --adam-eps 1e-8 "
            "--no-such-flag value --init-method-std -0.5 --tensor-model-parallel-size 2\n",
            "inline.sh");
        QCOMPARE(s.world_size, 8);
        QCOMPARE(s.model.num_layers, 8);
        QCOMPARE(s.parallel.tp, 2);
        QVERIFY(findFlag(s, "--no-such-flag"));   // unknown: kept and reported
        QCOMPARE(findFlag(s, "--no-such-flag")->values, std::vector<std::string>{"value"});
        QVERIFY(hasWarning(s, "unknown flag --no-such-flag"));
        QCOMPARE(findFlag(s, "--init-method-std")->values, std::vector<std::string>{"-0.5"});   // a negative value
        QCOMPARE(s.model.ffn_hidden_size, 4 * 512);
    }

    void warningsCiteTheFlagsLine()
    {
        // Flags written in arrays above the launch command: a warning names the line the flag
        // is written on; a flag written twice names both; a commented-out one is not counted;
        // one written in two branches of an if cites the launch command (which branch runs
        // decides the line).
        const ImportedScript s = importMegatronScript(
            "#!/bin/bash\n"                                          // 1
            "# --fp8-param-gather is for later\n"                     // 2
            "MODEL_ARGS=(\n"                                         // 3
            "  --num-layers 8 --hidden-size 512\n"                   // 4
            "  --num-attention-heads 8 --seq-length 1024\n"          // 5
            "  --max-position-embeddings 1024 --bf16\n"              // 6
            "  --no-such-flag value\n"                               // 7
            "  --fp8-format hybrid --fp8-param-gather --no-other-flag\n"   // 8
            ")\n"                                                    // 9
            "if [ \"$X\" = 1 ]; then EXTRA=\"--tp-comm-overlap\"; else EXTRA=\"--tp-comm-overlap\"; fi\n"   // 10
            "PAR=(--tensor-model-parallel-size 2 --micro-batch-size 1)\n"   // 11
            "torchrun --nproc_per_node 4 pretrain_gpt.py \"${MODEL_ARGS[@]}\" \\\n"   // 12
            "    \"${PAR[@]}\" $EXTRA \\\n"                          // 13
            "    --tensor-model-parallel-size 4\n",                  // 14
            "inline.sh");
        QCOMPARE(s.command_line, 12);
        QVERIFY2(hasWarning(s, "line 7: unknown flag --no-such-flag"), s.warnings.front().c_str());
        QVERIFY(hasWarning(s, "line 8: unknown flag --no-other-flag"));
        QCOMPARE(s.model.training.fp8_format, Fp8Format::Hybrid);
        QVERIFY(s.model.training.fp8_param_gather);
        QVERIFY(hasWarning(s, "lines 11, 14: --tensor-model-parallel-size is given more than once"));
        QVERIFY(hasWarning(s, "line 10: --tp-comm-overlap needs --sequence-parallel"));   // both on line 10
        QCOMPARE(s.parallel.tp, 4);

        const ImportedScript branches = importMegatronScript(
            "if [ \"$X\" = 1 ]; then\n"            // 1
            "  EXTRA=\"--tp-comm-overlap\"\n"       // 2
            "else\n"                                // 3
            "  EXTRA=\"--tp-comm-overlap\"\n"       // 4
            "fi\n"                                  // 5
            "torchrun --nproc_per_node 4 pretrain_gpt.py --num-layers 8 --hidden-size 512 --num-attention-heads 8 \\\n"   // 6
            "  --seq-length 1024 --max-position-embeddings 1024 --vocab-size 1000 --bf16 \\\n"   // 7
            "  --tensor-model-parallel-size 2 $EXTRA\n",   // 8
            "inline.sh");
        QVERIFY(hasWarning(branches, "line 6: --tp-comm-overlap needs --sequence-parallel"));
    }

    void optimizerOffload()
    {
        // --optimizer-cpu-offload alone offloads everything (Megatron-LM's
        // --optimizer-offload-fraction defaults to 1.0); a given fraction is read.
        const std::string head = "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 4 --hidden-size 512 "
                                 "--num-attention-heads 8 --seq-length 1024 --max-position-embeddings 1024 --bf16 "
                                 "--micro-batch-size 1 --global-batch-size 8 --use-distributed-optimizer ";
        const ImportedScript all = importMegatronScript(head + "--optimizer-cpu-offload --use-precision-aware-optimizer\n", "a.sh");
        QCOMPARE(all.parallel.optimizer_offload_fraction, 1.0);
        const ImportedScript part = importMegatronScript(
            head + "--optimizer-cpu-offload --optimizer-offload-fraction 0.25 --use-precision-aware-optimizer\n", "b.sh");
        QCOMPARE(part.parallel.optimizer_offload_fraction, 0.25);
        QCOMPARE(planFromScript(part, test::cluster("H800:1x8"), DeviceCatalog::builtin()).optimizer_offload_fraction, 0.25);
        // The fraction without the switch does nothing, as in Megatron-LM.
        const ImportedScript none = importMegatronScript(head + "--optimizer-offload-fraction 0.5\n", "c.sh");
        QCOMPARE(none.parallel.optimizer_offload_fraction, 0.0);
        const ImportedScript bad = importMegatronScript(head + "--optimizer-cpu-offload --optimizer-offload-fraction 2\n", "d.sh");
        QCOMPARE(bad.parallel.optimizer_offload_fraction, 1.0);
        QVERIFY(hasWarning(bad, "--optimizer-offload-fraction 2 is not a fraction in [0, 1]"));
        // Megatron-Core offloads only from the distributed optimizer (optimizer/__init__.py raises
        // "--use-precision-aware-optimizer only supported with distributed optimizer").
        std::string noDistributed = head + "--optimizer-cpu-offload --use-precision-aware-optimizer\n";
        noDistributed.replace(noDistributed.find("--use-distributed-optimizer "), 28, "");
        const std::string refusal = refusalOf(noDistributed, "e.sh");
        QVERIFY2(refusal.find("e.sh: --optimizer-cpu-offload: needs --use-distributed-optimizer") != std::string::npos, refusal.c_str());
    }

    void scriptsOfOtherForksRefused()
    {
        // Read as unknown flags, a MegaBlocks MoE would be costed as dense, and a DeepSpeed run's
        // ZeRO stage lost: refused at the flag, with what Megatron-LM calls it.
        const std::string head = "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 4 --hidden-size 512 "
                                 "--num-attention-heads 8 --seq-length 1024 --max-position-embeddings 1024 --bf16 "
                                 "--micro-batch-size 1 --global-batch-size 8 ";
        const std::string megablocks = refusalOf(head + "--moe-num-experts 64 --moe-top-k 1\n", "mb.sh");
        QVERIFY2(megablocks.find("mb.sh: --moe-num-experts: is a flag of MegaBlocks") != std::string::npos, megablocks.c_str());
        QVERIFY(megablocks.find("--num-experts N") != std::string::npos);
        const std::string deepspeed = refusalOf(head + "--deepspeed --deepspeed_config ds.json --zero-stage 1\n", "ds.sh");
        QVERIFY2(deepspeed.find("ds.sh: --deepspeed: is a flag of Megatron-DeepSpeed") != std::string::npos, deepspeed.c_str());
        const std::string kv = refusalOf(head + "--num-key-value-heads 4\n", "kv.sh");
        QVERIFY2(kv.find("--num-key-value-heads: is a flag of Megatron-DeepSpeed") != std::string::npos, kv.c_str());
        QVERIFY(kv.find("--group-query-attention --num-query-groups N") != std::string::npos);
        // Megatron-LM's required flags with underscores (epfLLM's Megatron-LLM).
        const std::string underscores = refusalOf(
            "torchrun --nproc_per_node=8 finetune.py --num_layers 4 --hidden_size 512 --num_attention_heads 8 --seq_length 1024\n",
            "u.sh");
        QVERIFY2(underscores.find("u.sh: --num_layers: is spelt with underscores") != std::string::npos, underscores.c_str());
        // T5 gives its layers per side: an encoder-decoder model, not a missing flag.
        const std::string t5 = refusalOf("torchrun --nproc_per_node=8 pretrain_t5.py --encoder-num-layers 12 --decoder-num-layers 12 "
                                         "--hidden-size 768 --num-attention-heads 12 --seq-length 512\n",
                                         "t5.sh");
        QVERIFY2(t5.find("t5.sh: --encoder-num-layers: the script (line 1: torchrun pretrain_t5.py) trains T5, an encoder-decoder "
                         "model") != std::string::npos,
                 t5.c_str());
        QCOMPARE(refusalOf(head + "\n", "ok.sh"), std::string("accepted"));
    }

    void moeLayerRecompute()
    {
        // Megatron-LM d98e8a64 (TransformerConfig.__post_init__): the deprecated flag becomes
        // selective recompute with "moe" among the modules, and raises with full granularity.
        const std::string head = "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 4 --hidden-size 512 "
                                 "--num-attention-heads 8 --seq-length 1024 --max-position-embeddings 1024 --bf16 "
                                 "--micro-batch-size 1 --global-batch-size 8 --num-experts 8 ";
        const ImportedScript alone = importMegatronScript(head + "--moe-layer-recompute\n", "a.sh");
        QCOMPARE(alone.parallel.recompute, Recompute::Selective);
        // Megatron-Core's default module, core attention, and the MoE layer it appends.
        QCOMPARE(alone.parallel.recompute_modules, recompute_module::core_attn | recompute_module::moe);
        QVERIFY(!hasWarning(alone, "--recompute-modules"));
        const ImportedScript listed = importMegatronScript(head + "--moe-layer-recompute --recompute-modules moe_act --moe-grouped-gemm\n", "l.sh");
        QCOMPARE(listed.parallel.recompute_modules, recompute_module::moe_act | recompute_module::moe);
        const std::string act = refusalOf(head + "--recompute-granularity selective --recompute-modules moe_act\n", "act.sh");
        QVERIFY2(act.find("act.sh: --recompute-modules: moe_act needs --moe-grouped-gemm") != std::string::npos, act.c_str());
        const std::string full = refusalOf(head + "--moe-layer-recompute --recompute-granularity full --recompute-method uniform "
                                                  "--recompute-num-layers 1\n",
                                           "f.sh");
        QVERIFY2(full.find("f.sh: --moe-layer-recompute: must not be given with --recompute-granularity full") != std::string::npos,
                 full.c_str());
    }

    void multimodalLanguageModelSequence()
    {
        // examples/multimodal/train.py runs the language model at --decoder-seq-length; its
        // --seq-length is the vision encoder's (576 image tokens for CLIP ViT-L/14 at 336 px).
        const std::string script = "torchrun --nproc_per_node=8 examples/multimodal/train.py --num-layers 32 --hidden-size 4096 "
                                   "--num-attention-heads 32 --seq-length 576 --decoder-seq-length 1024 "
                                   "--max-position-embeddings 4096 --bf16 --micro-batch-size 1 --global-batch-size 8 --freeze-LM\n";
        const ImportedScript s = importMegatronScript(script, "mm.sh");
        QCOMPARE(s.model.seq_length, 1024);
        QVERIFY(hasWarning(s, "the language model is costed at --decoder-seq-length 1024"));
        QVERIFY(hasWarning(s, "--freeze-LM is not modelled"));
        // pretrain_gpt.py keeps --seq-length.
        const ImportedScript gpt = importMegatronScript(
            "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 4 --hidden-size 512 --num-attention-heads 8 --seq-length 576 "
            "--max-position-embeddings 1024 --bf16 --micro-batch-size 1 --global-batch-size 8\n",
            "gpt.sh");
        QCOMPARE(gpt.model.seq_length, 576);
    }

    void nodeCountFromTheCluster()
    {
        // NNODES from a hostfile's lines is a command the reading does not run: 1 on the
        // script's own nodes, every node of a cluster it is placed on.
        const std::string script = "NNODES=$(wc -l < $HOSTFILE)\n"
                                   "torchrun --nproc_per_node 8 --nnodes $NNODES pretrain_gpt.py --num-layers 8 --hidden-size 512 "
                                   "--num-attention-heads 8 --seq-length 1024 --max-position-embeddings 1024 --bf16 "
                                   "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 --sequence-parallel "
                                   "--micro-batch-size 1 --global-batch-size 64\n";
        const ImportedScript s = importMegatronScript(script, "hosts.sh");
        QCOMPARE(s.nnodes, 1);
        QVERIFY(s.nnodes_unknown);
        QVERIFY(hasWarning(s, "1 is assumed (placed on a cluster given with --cluster, the script runs on its leading nodes of one type"));
        const Plan p = planFromScript(s, test::cluster("A100:8x8"), DeviceCatalog::builtin());
        QCOMPARE(p.numDevices(), 64);   // TP 8 x PP 4 x DP 2
        QCOMPARE(p.pp(), 4);
        // As many leading nodes of the first node's type as TP x PP x CP = 32 divides: 4 of the
        // 5 A100 nodes (40 devices would not split), none of the H800 node after them.
        QCOMPARE(planFromScript(s, test::cluster("A100:5x8,H800:1x8"), DeviceCatalog::builtin()).numDevices(), 32);
        // A node count the script states is read as it stands: 4 of the 8 nodes.
        std::string stated = script;
        stated.replace(stated.find("$NNODES"), 7, "4");
        const ImportedScript known = importMegatronScript(stated, "four.sh");
        QVERIFY(!known.nnodes_unknown);
        QCOMPARE(planFromScript(known, test::cluster("A100:8x8"), DeviceCatalog::builtin()).numDevices(), 32);
    }

    void overlapSwitches()
    {
        // Megatron-LM leaves --overlap-grad-reduce, --overlap-param-gather and --tp-comm-overlap
        // off unless given; the second needs the first and the distributed optimizer, the third
        // sequence parallelism (arguments.py asserts both). The estimate of a script follows them.
        const std::string head = "torchrun --nproc_per_node=8 pretrain_gpt.py --num-layers 4 --hidden-size 512 "
                                 "--num-attention-heads 8 --seq-length 1024 --max-position-embeddings 1024 --bf16 "
                                 "--micro-batch-size 1 --global-batch-size 8 --tensor-model-parallel-size 2 ";
        const ImportedScript plain = importMegatronScript(head + "\n", "plain.sh");
        QVERIFY(!plain.parallel.overlap_grad_reduce && !plain.parallel.overlap_param_gather && !plain.parallel.tp_comm_overlap);
        const CostOptions plainOpt = scriptCostOptions(plain);
        QVERIFY(!plainOpt.overlap.grad_reduce && !plainOpt.overlap.param_gather && !plainOpt.overlap.tp_comm);
        QVERIFY(plainOpt.overlap.p2p);   // Megatron-LM's overlap_p2p_comm defaults to True
        QVERIFY(!scriptCostOptions(importMegatronScript(head + "--no-overlap-p2p-communication\n", "p.sh")).overlap.p2p);

        const ImportedScript all = importMegatronScript(
            head + "--use-distributed-optimizer --sequence-parallel --overlap-grad-reduce --overlap-param-gather --tp-comm-overlap\n",
            "all.sh");
        const CostOptions allOpt = scriptCostOptions(all);
        QVERIFY(allOpt.overlap.grad_reduce && allOpt.overlap.param_gather && allOpt.overlap.tp_comm);
        QVERIFY(!hasWarning(all, "overlap"));
        // The flags stay with the script's other flags, so an export carries them over.
        int carried = 0;
        for (const ScriptFlag& f : all.other_flags)
            carried += f.name == "--overlap-grad-reduce" || f.name == "--overlap-param-gather" || f.name == "--tp-comm-overlap";
        QCOMPARE(carried, 3);

        const ImportedScript noDistOpt = importMegatronScript(head + "--overlap-grad-reduce --overlap-param-gather\n", "g.sh");
        QVERIFY(noDistOpt.parallel.overlap_grad_reduce);
        QVERIFY(!noDistOpt.parallel.overlap_param_gather);
        QVERIFY(hasWarning(noDistOpt, "--overlap-param-gather needs --use-distributed-optimizer (Megatron-LM asserts it)"));
        const ImportedScript noReduce = importMegatronScript(head + "--use-distributed-optimizer --overlap-param-gather\n", "r.sh");
        QVERIFY(hasWarning(noReduce, "--overlap-param-gather needs --overlap-grad-reduce (Megatron-LM asserts it)"));
        const ImportedScript noSp = importMegatronScript(head + "--tp-comm-overlap\n", "t.sh");
        QVERIFY(!noSp.parallel.tp_comm_overlap);
        QVERIFY(hasWarning(noSp, "--tp-comm-overlap needs --sequence-parallel"));

        // Plans for a script are costed as their exported launchers run: the data-parallel
        // overlap on (the export writes it), the script's TP and p2p overlap (carried over).
        const CostOptions plainExport = exportCostOptions(plain);
        QVERIFY(plainExport.overlap.grad_reduce && plainExport.overlap.param_gather);
        QVERIFY(!plainExport.overlap.tp_comm && plainExport.overlap.p2p);
        QVERIFY(exportCostOptions(all).overlap.tp_comm);
        QVERIFY(!exportCostOptions(importMegatronScript(head + "--no-overlap-p2p-communication\n", "p.sh")).overlap.p2p);

        // Performance switches the cost model does not model are named.
        const ImportedScript other = importMegatronScript(
            head + "--overlap-moe-expert-parallel-comm --fp8-format hybrid --cuda-graph-impl transformer_engine\n", "o.sh");
        QVERIFY(hasWarning(other, "--overlap-moe-expert-parallel-comm (combined 1F1B) is not modelled"));
        // --fp8-format is read (the linear layers' GEMMs in FP8), not named as unmodelled.
        QVERIFY(!hasWarning(other, "--fp8-format"));
        QCOMPARE(other.model.training.fp8_format, Fp8Format::Hybrid);
        QVERIFY(!findFlag(other, "--fp8-format"));
        const ImportedScript e4m3 = importMegatronScript(head + "--fp8-format e4m3\n", "e.sh");
        QCOMPARE(e4m3.model.training.fp8_format, Fp8Format::E4M3);
        const ImportedScript bad = importMegatronScript(head + "--fp8-format e5m2\n", "b.sh");
        QCOMPARE(bad.model.training.fp8_format, Fp8Format::None);
        QVERIFY(!bad.invalid_values.empty() && bad.invalid_values.front().flag == "--fp8-format");
        QVERIFY(hasWarning(other, "CUDA graphs are not modelled"));
        const ImportedScript fsdp = importMegatronScript(head + "--use-megatron-fsdp --use-dualpipev\n", "f.sh");
        QVERIFY(hasWarning(fsdp, "--use-megatron-fsdp is not modelled"));
        QVERIFY(hasWarning(fsdp, "--use-dualpipev is not modelled: the schedule is costed as 1F1B"));
        QVERIFY(!hasWarning(importMegatronScript(head + "--cuda-graph-impl none\n", "n.sh"), "CUDA graphs"));
        // Without clipping there is no gradient-norm all-reduce (docs/cost-model.md section 12).
        QVERIFY(hasWarning(importMegatronScript(head + "--clip-grad 0.0\n", "c.sh"), "--clip-grad 0 is not modelled"));
        QVERIFY(!hasWarning(importMegatronScript(head + "--clip-grad 1.0\n", "c.sh"), "--clip-grad"));
        // DeepSeek's multi-latent attention: its sizes are read, Megatron-LM's defaults
        // (arguments.py _add_mla_args: --q-lora-rank None, --kv-lora-rank 32, --qk-head-dim 128,
        // --qk-pos-emb-head-dim 64, --v-head-dim 128) for those not given.
        const ImportedScript mla = importMegatronScript(head + "--multi-latent-attention --kv-lora-rank 512 --v-head-dim 96\n", "m.sh");
        QVERIFY(mla.model.multi_latent_attention);
        QCOMPARE(mla.model.q_lora_rank, 0);
        QCOMPARE(mla.model.kv_lora_rank, 512);
        QCOMPARE(mla.model.qk_head_dim, 128);
        QCOMPARE(mla.model.qk_pos_emb_head_dim, 64);
        QCOMPARE(mla.model.v_head_dim, 96);
        QVERIFY(!hasWarning(mla, "multi-latent"));
        const ImportedScript mlaLora = importMegatronScript(head + "--multi-latent-attention --q-lora-rank 1536\n", "m.sh");
        QCOMPARE(mlaLora.model.q_lora_rank, 1536);
        QCOMPARE(mlaLora.model.kv_lora_rank, 32);
        QVERIFY(!plain.model.multi_latent_attention);
        // 8 heads over TP 3 (the later flag wins): Megatron-LM refuses it, and so does the import.
        const ImportedScript tp3 = importMegatronScript(head + "--tensor-model-parallel-size 3\n", "t.sh");
        try {
            validateScriptModel(tp3);
            QFAIL("TP 3 over 8 heads was accepted");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromStdString(e.what()),
                     QStringLiteral("t.sh: --tensor-model-parallel-size: TP 3 does not divide the 8 attention heads "
                                    "(Megatron-LM asserts num_attention_heads % TP == 0)"));
        }
    }

    void nothingIsExecuted()
    {
        // Command substitution, backticks and eval are never run: they stay text and are reported.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string marker = dir.filePath("ran").toStdString();
        const std::string script = "OUT=$(touch " + marker + ")\nT=`touch " + marker + "`\neval \"touch " + marker
            + "\"\ntorchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 2 --save $(touch " + marker
            + ") --load `touch " + marker + "`\n";
        const ImportedScript s = importMegatronScript(script, "hostile.sh");
        QVERIFY(!QFile::exists(QString::fromStdString(marker)));
        QCOMPARE(findFlag(s, "--save")->values, std::vector<std::string>{"$(touch " + marker + ")"});
        QCOMPARE(findFlag(s, "--load")->values, std::vector<std::string>{"`touch " + marker + "`"});
        QVERIFY(hasWarning(s, "command substitution"));
        // eval's text is read as commands (evalRunsItsText), and a command is recorded, never run.
        QVERIFY(!hasWarning(s, "eval"));
    }

    void substitutionTextIsOneWord()
    {
        // A variable set from a command substitution holds the substitution's text, which is
        // one word wherever it is expanded: its "|" and blanks must not end the launch
        // command or become flags (bash would split the command's output, "8").
        const std::string tail = " --nnodes 2 pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 2 "
                                 "--tensor-model-parallel-size 2 --seq-length 512 --max-position-embeddings 512 "
                                 "--micro-batch-size 1 --global-batch-size 16\n";
        for (const std::string& assign : {std::string("GPUS=$(nvidia-smi -L | wc -l)"), std::string("GPUS=`nvidia-smi -L | wc -l`"),
                                          std::string("GPUS=${GPUS:-$(nvidia-smi --list-gpus | wc -l)}"),
                                          std::string("N=$(nvidia-smi -L | wc -l)\nGPUS=$N")}) {
            const ImportedScript s = importMegatronScript(assign + "\ntorchrun --nproc_per_node $GPUS" + tail, "gpus.sh");
            QCOMPARE(s.entry_script, std::string("pretrain_gpt.py"));
            QCOMPARE(s.nnodes, 2);
            // The command counts the node's devices: read as --nproc_per_node gpu (0: every
            // device of a node), with a warning.
            QCOMPARE(s.nproc_per_node, 0);
            QVERIFY(hasWarning(s, "the output of a command that is not run; every device of a node is assumed"));
            QCOMPARE(s.parallel.tp, 2);
            QVERIFY2(s.other_flags.empty(), assign.c_str());
            // On a cluster of 2 nodes of 8 the configuration takes 16 ranks: TP 2, DP 8.
            const Plan plan = planFromScript(s, test::cluster("H800:2x8"), DeviceCatalog::builtin());
            QCOMPARE(plan.numDevices(), 16);
            QCOMPARE(plan.stages.front().dp, 8);
        }
        // Only a value that is one substitution is one word: one that holds a substitution
        // among other words splits as usual (the SLURM pattern of DISTRIBUTED_ARGS).
        const ImportedScript slurm = importMegatronScript(
            "MASTER_ADDR=$(hostname)\nARGS=\"--nproc_per_node 8 --nnodes 2 --master_addr $MASTER_ADDR --master_port 6000\"\n"
            "torchrun $ARGS pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 2\n", "slurm.sh");
        QCOMPARE(slurm.nnodes, 2);
        QCOMPARE(slurm.nproc_per_node, 8);
        QCOMPARE(slurm.master_addr, std::string("$(hostname)"));
        // ${X:=$(...)} assigns the substitution as X=$(...) does.
        const ImportedScript colonEquals = importMegatronScript(
            ": ${GPUS:=$(nvidia-smi -L | wc -l)}\ntorchrun --nproc_per_node $GPUS" + tail, "assign.sh");
        QCOMPARE(colonEquals.entry_script, std::string("pretrain_gpt.py"));
        QCOMPARE(colonEquals.nproc_per_node, 0);
        QVERIFY(colonEquals.other_flags.empty());
        // Assigned again without a substitution, the variable splits as usual.
        const ImportedScript plain = importMegatronScript(
            "A=$(hostname)\nA='--nproc_per_node 4'\ntorchrun $A" + tail, "plain.sh");
        QCOMPARE(plain.nproc_per_node, 4);
    }

    void layoutAndSplits()
    {
        const std::string base = "torchrun pretrain_gpt.py --hidden-size 64 --num-attention-heads 2 ";
        // [5,8,8,9] on PP=4 (reference section 4a, verified with Megatron's parser).
        ImportedScript s = importMegatronScript(
            base + "--num-layers 30 --pipeline-model-parallel-size 4 --pipeline-model-parallel-layout \"Ettttt|tttttttt|tttttttt|tttttttttL\"\n",
            "a.sh");
        QCOMPARE(s.parallel.layer_split, (std::vector<int>{5, 8, 8, 9}));
        QCOMPARE(s.parallel.vpp, 1);
        // DeepSeek-V3's layout from Megatron's docs: 61 layers + 1 MTP on PP16 -> VPP2,
        // pp0 = E+3t / 2t = 5 layers, pp1..13 = 4, pp14 = 2t / m = 2, pp15 = 2t / L = 2.
        s = importMegatronScript(base + "--num-layers 61 --pipeline-model-parallel-size 16 "
                                        "--pipeline-model-parallel-layout 'Et*3|(tt|)*29,m|L'\n",
                                 "b.sh");
        QCOMPARE(s.parallel.vpp, 2);
        std::vector<int> expected(16, 4);
        expected[0] = 5;
        expected[14] = 2;
        expected[15] = 2;
        QCOMPARE(s.parallel.layer_split, expected);
        // First/last stage counts: 12 layers, PP4, first 2, last 2 -> [2,4,4,2] (Megatron's
        // gpt3_mcore_te_tp1_pp4_vp1_uneven_pipeline test case).
        s = importMegatronScript(base + "--num-layers 12 --pipeline-model-parallel-size 4 "
                                        "--decoder-first-pipeline-num-layers 2 --decoder-last-pipeline-num-layers 2\n",
                                 "c.sh");
        QCOMPARE(s.parallel.layer_split, (std::vector<int>{2, 4, 4, 2}));
        // Interleaving from layers per virtual stage: 32 / (PP4 * 4) = VPP 2.
        s = importMegatronScript(base + "--num-layers 32 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 4\n",
                                 "d.sh");
        QCOMPARE(s.parallel.vpp, 2);
        // A MoE layer pattern as a Python list expression: 3 dense then 58 MoE layers.
        s = importMegatronScript(base + "--num-layers 61 --num-experts 64 --moe-layer-freq \"([0]*3+[1]*58)\"\n", "e.sh");
        QCOMPARE(s.model.moe_layer_pattern.size(), std::size_t(61));
        QCOMPARE(s.model.numMoeLayers(), 58);
        QVERIFY(!s.model.isMoeLayer(2));
        QVERIFY(s.model.isMoeLayer(3));
    }

    void badScripts()
    {
        QVERIFY_THROWS_EXCEPTION(InputError, importMegatronScript("echo hello\nls -l\n", "nolaunch.sh"));
        try {
            importMegatronScript("A=1\nB=\"unterminated\ntorchrun x.py\n", "quote.sh");
            QFAIL("an unterminated quote must be refused");
        } catch (const InputError& e) {
            QCOMPARE(e.file(), std::string("quote.sh"));
            QCOMPARE(e.where(), std::string("line 2"));
        }
        QVERIFY_THROWS_EXCEPTION(InputError, importMegatronScript("A=(one two\ntorchrun x.py\n", "array.sh"));
        // Deep nesting and huge repeat counts are refused or kept as text, never a crash.
        std::string deep = "X=";
        for (int i = 0; i < 200; ++i) deep += "${A:-";
        for (int i = 0; i < 200; ++i) deep += "}";
        const ImportedScript s = importMegatronScript(deep + "\ntorchrun x.py --num-layers $((1+))\n", "deep.sh");
        QCOMPARE(s.entry_script, std::string("x.py"));
    }

    void sizesBeyondAnyLaunch()
    {
        const std::string launch = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --hidden-size 64 "
                                   "--num-attention-heads 8 --seq-length 128";
        auto errorOf = [](const std::string& text, const std::string& file) -> std::string {
            try {
                validateScriptModel(importMegatronScript(text, file));
            } catch (const InputError& e) {
                return e.file() + ": " + e.where() + ": " + e.detail();
            }
            return "accepted";
        };
        // A value doubled 64 times (2^68 bytes) stops at the 16 MiB bound: at the assignment
        // that passes it, 16 bytes x 2^20 = 16 MiB after line 21, more after line 22.
        // A first line, then another written `times` times.
        auto repeated = [](std::string text, const std::string& line, int times) {
            for (int i = 0; i < times; ++i)
                text += line;
            return text;
        };
        const std::string doubled = repeated("A=xxxxxxxxxxxxxxxx\n", "A=$A$A\n", 64);
        QCOMPARE(errorOf(doubled + launch + "\n", "double.sh"),
                 std::string("double.sh: line 22: A grows past 16 MiB; a launch script's values are far smaller, so the "
                             "script is not read"));
        // A pattern substitution that puts a value into each of its own characters squares it,
        // and is stopped as it grows, not once it is whole: 47 characters become 47^2 = 2,209,
        // then 47 x 2,209 = 103,823 (line 2); at line 3 the result would be 103,823^2 bytes
        // (10.8 GB), and passes 16 MiB after 162 of its 103,823 replacements.
        const std::string square = "S=" + std::string(47, 'a') + "\nX=${S//a/${S//a/$S}}\nX=${X//a/$X}\n";
        QCOMPARE(errorOf(square + launch + "\n", "square.sh"),
                 std::string("square.sh: line 3: ${X//a/$X} grows past 16 MiB; a launch script's values are far smaller, "
                             "so the script is not read"));
        // printf -v writes a value as long as its width or precision says: one of a billion
        // characters (a gigabyte, a minute to format) is refused as a doubled value is, by the
        // number, before anything is formatted; so is a width given by * and a long format used
        // again for each argument (2 MiB x 9 arguments).
        for (const std::string& line : {std::string("printf -v X '%.999999999f' 1\n"), std::string("printf -v X '%999999999d' 1\n"),
                                        std::string("printf -v X '%*d' 999999999 1\n"),
                                        std::string("printf -v X '%s") + std::string(2 << 20, 'y') + "' 1 2 3 4 5 6 7 8 9\n"})
            QCOMPARE(errorOf(line + launch + "\n", "printf.sh"),
                     std::string("printf.sh: line 1: X grows past 16 MiB; a launch script's values are far smaller, so the "
                                 "script is not read"));
        // A width within the bound is written as bash writes it; a precision of %s only cuts
        // (twenty million is no size), and leading zeros of a precision add nothing.
        for (const auto& [line, expected] : std::vector<std::pair<std::string, std::string>>{
                 {"printf -v W '%5d|%-3s|' 42 ab", "   42|ab |"},
                 {"printf -v W '%.20000000s|' ab", "ab|"},
                 {"printf -v W '%.0000000002f' 1", "1.00"}}) {
            const ImportedScript w = importMegatronScript(line + "\ntorchrun x.py --run-name \"$W\"\n", "w.sh");
            const auto flag = std::find_if(w.other_flags.begin(), w.other_flags.end(),
                                           [](const ScriptFlag& f) { return f.name == "--run-name"; });
            QVERIFY2(flag != w.other_flags.end(), line.c_str());
            QCOMPARE(flag->values, std::vector<std::string>{expected});
        }
        // A pattern tried at every start and end of a long value: ${X/*a*b/c} on 4,096
        // characters that never match took 5 s a line; one match of "*a*b*" at each start now
        // says no end can match (0.04 s for six lines), and a pattern of fixed length ("a?",
        // "[ab]b") is tried at its one end. What still tries every end, ${X##*b} on "b" and
        // 4,095 "a" (4,096 prefixes, 8.4 million characters a line), stops past two billion
        // characters over the script: from there the expansions keep their values, with one
        // warning, and the script is read on.
        {
            const std::string six = "printf -v X '%4096s' ''\nX=${X// /a}\n" + repeated("", "Y=${X/*a*b/c}\n", 6);
            BashReader fast("pattern.sh");
            fast.read(six);
            QCOMPARE(fast.variables().at("Y"), std::string(4096, 'a'));   // no match: X as it was
            QVERIFY(fast.warnings().empty());
            BashReader fixed("fixed.sh");
            fixed.read("printf -v X '%2048s' ''\nX=${X// /ab}\nY=${X//a?/c}\nZ=${X//[ab]b/d}\n");
            QCOMPARE(fixed.variables().at("Y"), std::string(2048, 'c'));   // as bash gives
            QCOMPARE(fixed.variables().at("Z"), std::string(2048, 'd'));
        }
        const std::string slow = "printf -v X '%4095s' ''\nX=b${X// /a}\n" + repeated("", "Y=${X##*b}\n", 300);
        const ImportedScript patterns = importMegatronScript(slow + launch + "\n", "pattern.sh");
        QCOMPARE(patterns.model.num_layers, 2);
        QCOMPARE(std::count_if(patterns.warnings.begin(), patterns.warnings.end(), [](const std::string& w) {
                     return w.find("pattern matching on long values takes too long") != std::string::npos;
                 }),
                 std::ptrdiff_t(1));
        {
            BashReader kept("pattern.sh");
            kept.read(slow);
            QCOMPARE(kept.variables().at("Y"), "b" + std::string(4095, 'a'));   // past the budget: X as it was
        }
        // An array doubled the same way: 2 x 2^19 = 1,048,576 elements after line 20.
        const std::string array = repeated("A=(x y)\n", "A=(\"${A[@]}\" \"${A[@]}\")\n", 64);
        QCOMPARE(errorOf(array + launch + "\n", "array.sh"),
                 std::string("array.sh: line 21: A grows past 1,048,576 elements; a launch script's values are far "
                             "smaller, so the script is not read"));
        // One value of 1 MiB expanded 300 times in one command: the expansions pass 256 MiB.
        const std::string many = repeated("A=" + std::string(1 << 20, 'x') + "\nB=", "$A", 300) + "\n" + launch + "\n";
        const std::string tooMuch = errorOf(many, "many.sh");
        QVERIFY2(tooMuch.rfind("many.sh: line 2: the script's variable expansions add up to more than 256 MiB", 0) == 0,
                 tooMuch.c_str());
        // A list of 2^19 one-byte elements expanded again and again: each element counts 32
        // bytes besides its byte and blank, so an expansion counts 34 x 2^19 - 1. Building it
        // (lines 2-19, two expansions each) counts 35,651,412; the 14th expansion after, at
        // line 33, passes 2^28 (285,212,486). By bytes alone it would take some 230 lines.
        const std::string list = repeated(repeated("A=(x y)\n", "A=(\"${A[@]}\" \"${A[@]}\")\n", 18), ": \"${A[@]}\"\n", 40);
        const std::string listed = errorOf(list + launch + "\n", "list.sh");
        QVERIFY2(listed.rfind("list.sh: line 33: the script's variable expansions add up to more than 256 MiB", 0) == 0,
                 listed.c_str());
        // A call that passes its arguments on twice doubles them at each of its 64 levels: the
        // n-th call has 2^(n-1), past the bound of 262,144 = 2^18 at the 20th (line 1).
        QCOMPARE(errorOf("f() { f \"$@\" \"$@\"; }\nf a\n" + launch + "\n", "recurse.sh"),
                 std::string("recurse.sh: line 1: function f is called with more than 262,144 arguments; a launch "
                             "script's are far fewer, so the script is not read (do its calls pass \"$@\" on twice?)"));
        // So are those set -- gives: 2^(k-1) at line k, 2^19 at line 20.
        const std::string set = repeated("set -- a\n", "set -- \"$@\" \"$@\"\n", 64);
        QCOMPARE(errorOf(set + launch + "\n", "set.sh"),
                 std::string("set.sh: line 20: set -- gives more than 262,144 arguments; a launch script's are far "
                             "fewer, so the script is not read (do its calls pass \"$@\" on twice?)"));
        // $( opened 90,000 times in one line: the functions that skip quotes and substitutions
        // call one another once a level, so past 1,000 levels the script is refused before the
        // stack runs out; 900 levels of ${X:-...} are read (their expansion, past 24 levels,
        // is kept as text with a warning).
        QCOMPARE(errorOf("A=" + repeated("", "$(", 90000) + "\n" + launch + "\n", "deep.sh"),
                 std::string("deep.sh: : quotes, ${ } and $( ) are nested in one another more than 1,000 deep; a "
                             "launch script nests a few, so the script is not read"));
        QCOMPARE(errorOf("A=\"" + repeated("", "${X:-", 900) + "a" + std::string(900, '}') + "\"\n" + launch + "\n", "nested.sh"),
                 std::string("accepted"));
        // Groups and ifs nested past 1,000 levels: reading a level looks for its end, so 100,000
        // nested { took 57 s; refused at the line that opens the 1,001st. 500 nested ifs in a
        // group are read.
        QCOMPARE(errorOf(repeated("", "{\n", 1001) + launch + "\n" + repeated("", "}\n", 1001), "groups.sh"),
                 std::string("groups.sh: line 1001: groups, subshells, ifs, loops and case blocks are nested in one another "
                             "more than 1,000 deep; a launch script nests a few, so the script is not read"));
        QCOMPARE(errorOf("{\n" + repeated("", "if true; then\n", 500) + launch + "\n" + repeated("", "fi\n", 500) + "}\n", "ifs.sh"),
                 std::string("accepted"));
        // Parallel sizes whose product is not an int (65536^3 = 2^48): no division by zero, the
        // world of 8 is not divisible by it (a warning on import); on a cluster the script is
        // refused, first for its 8 heads over TP 65536.
        const ImportedScript big = importMegatronScript(
            launch + " --tensor-model-parallel-size 65536 --pipeline-model-parallel-size 65536 --context-parallel-size 65536\n",
            "sizes.sh");
        QVERIFY(hasWarning(big, "world size 8 is not divisible by TP*PP*CP = 281474976710656"));
        try {
            planFromScript(big, test::cluster("H800:1x8"), DeviceCatalog::builtin());
            QFAIL("TP x PP x CP above the world size must be refused");
        } catch (const InputError& e) {
            QCOMPARE(e.file(), std::string("sizes.sh"));
            QVERIFY2(std::string(e.detail()).find("TP 65536 does not divide the 8 attention heads") != std::string::npos, e.what());
        }
        // A script's file name may hold characters no model name may: the name leaves them out.
        const ImportedScript oddName = importMegatronScript("torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --hidden-size 64 "
                                                            "--num-attention-heads 8 --seq-length 128\n",
                                                            "tr\u2028ai\x1bn.sh");
        QCOMPARE(oddName.model.name, std::string("train"));
        QVERIFY(oddName.model.source.find("tr\u2028") == std::string::npos);
        readModel(writeModel(oddName.model), "odd.json");   // reads back
        // 100,000 nodes of 4,096 processes, each count one a cluster may hold: 409,600,000
        // processes, refused with the product.
        QCOMPARE(errorOf("torchrun --nproc_per_node 4096 --nnodes 100000 pretrain_gpt.py --num-layers 2 --hidden-size 64 "
                         "--num-attention-heads 8 --seq-length 128\n",
                         "nodes.sh"),
                 std::string("nodes.sh: --nnodes: the launch starts 409600000 processes (--nnodes x --nproc_per_node); "
                             "expected at most 1048576, the most devices a cluster may have"));
        // 257 nodes of 4,096: each count within its bound, 1,052,672 processes in all.
        QCOMPARE(errorOf("torchrun --nproc_per_node 4096 --nnodes 257 pretrain_gpt.py --num-layers 2 --hidden-size 64 "
                         "--num-attention-heads 8 --seq-length 128\n",
                         "nodes.sh"),
                 std::string("nodes.sh: --nnodes: the launch starts 1052672 processes (--nnodes x --nproc_per_node); "
                             "expected at most 1048576, the most devices a cluster may have"));
        // An elastic range whose minimum is above its maximum.
        QCOMPARE(errorOf("torchrun --nproc_per_node 8 --nnodes 4:2 pretrain_gpt.py --num-layers 2 --hidden-size 64 "
                         "--num-attention-heads 8 --seq-length 128\n",
                         "elastic.sh"),
                 std::string("elastic.sh: --nnodes: --nnodes 4:2 has its minimum above its maximum, which torchrun refuses"));
        // A node count written as no count (torch.distributed.run asserts 0 < min_nodes), and
        // one beyond any plan; a variable left unexpanded only gets the assumption of 1 node.
        for (const char* n : {"0", "-1", "abc"})
            QCOMPARE(errorOf(std::string("torchrun --nproc_per_node 8 --nnodes ") + n + " pretrain_gpt.py --num-layers 2 "
                                 "--hidden-size 64 --num-attention-heads 8 --seq-length 128\n",
                             "count.sh"),
                     std::string("count.sh: --nnodes: --nnodes ") + n + " is no node count, which torchrun refuses");
        QCOMPARE(errorOf("torchrun --nproc_per_node 8 --nnodes 99999999999999 pretrain_gpt.py --num-layers 2 --hidden-size 64 "
                         "--num-attention-heads 8 --seq-length 128\n",
                         "many.sh"),
                 std::string("many.sh: --nnodes: --nnodes 99999999999999 is more nodes than the 1000000 a plan may have"));
        // Counts torchrun takes but no cluster holds (io/Documents.h: 100,000 nodes, 4,096 devices a node).
        QCOMPARE(errorOf("torchrun --nproc_per_node 8 --nnodes 100001 pretrain_gpt.py --num-layers 2 --hidden-size 64 "
                         "--num-attention-heads 8 --seq-length 128\n",
                         "wide.sh"),
                 std::string("wide.sh: --nnodes: --nnodes 100001 is more nodes than the 100000 a cluster may have"));
        QCOMPARE(errorOf("torchrun --nproc_per_node 4097 pretrain_gpt.py --num-layers 2 --hidden-size 64 "
                         "--num-attention-heads 8 --seq-length 128\n",
                         "fat.sh"),
                 std::string("fat.sh: --nproc_per_node: --nproc_per_node 4097 is more processes than the 4096 devices a node may have"));
        QCOMPARE(errorOf("torchrun --nproc_per_node 8 --nnodes $NODES pretrain_gpt.py --num-layers 2 --hidden-size 64 "
                         "--num-attention-heads 8 --seq-length 128\n",
                         "unset.sh"),
                 std::string("accepted"));
    }

    void planOnCluster()
    {
        const ImportedScript s = importMegatronScriptFile(test::dataFile("train_mixtral_8x7b_distributed.sh"));
        const Cluster c = test::cluster("H800:4x8");
        const Plan p = planFromScript(s, c, DeviceCatalog::builtin());
        QCOMPARE(p.pp(), 4);
        QCOMPARE(p.global_batch_size, 256);
        QCOMPARE(p.numMicrobatches(), 32);   // 256 / (MBS 1 * DP 8)
        const std::vector<int> ids = test::nodeIds(c);
        for (int st = 0; st < 4; ++st) {
            const StagePlan& stage = p.stages[static_cast<std::size_t>(st)];
            QCOMPARE(stage.device_type, std::string("H800"));
            QCOMPARE(stage.num_layers, 8);
            QCOMPARE(stage.first_layer, 8 * st);
            // TP1 CP1 on 8 devices: DP 8; EP 8, ETP = TP = 1, EDP 1 (folding).
            QCOMPARE(stage.dp, 8);
            QCOMPARE(stage.ep, 8);
            QCOMPARE(stage.etp, 1);
            QCOMPARE(stage.edp, 1);
            QCOMPARE(stage.devices.size(), std::size_t(1));
            QCOMPARE(stage.devices.front().node, ids[static_cast<std::size_t>(st)]);
        }
        // 4 nodes on a 3-node cluster: refused with the reason.
        QVERIFY_THROWS_EXCEPTION(InputError, planFromScript(s, test::cluster("H800:3x8"), DeviceCatalog::builtin()));
        // PP2 over 4 nodes: stage 0 would span the A100 node and an H800 node.
        const ImportedScript two = importMegatronScript(
            "torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py --num-layers 8 --hidden-size 64 --num-attention-heads 8 "
            "--seq-length 1024 --pipeline-model-parallel-size 2\n",
            "two.sh");
        QVERIFY_THROWS_EXCEPTION(InputError,
                                 planFromScript(two, test::cluster("A100-80GB:1x8,H800:3x8"), DeviceCatalog::builtin()));
        const Plan ok = planFromScript(two, test::cluster("A100-80GB:2x8,H800:2x8"), DeviceCatalog::builtin());
        QCOMPARE(ok.stages[0].device_type, std::string("A100-80GB"));
        QCOMPARE(ok.stages[1].device_type, std::string("H800"));
    }

    void gradientPrecisionFlags()
    {
        // Megatron-LM's arguments.py: bf16 reduces gradients in fp32 unless
        // --grad-reduce-in-bf16; fp16 in half precision unless
        // --accumulate-allreduce-grads-in-fp32. The model keeps only a departure from that.
        const std::string head = llamaLaunch();
        auto grads = [&](const std::string& flags) { return importMegatronScript(head + flags + "\n", "g.sh").model.training; };
        // Mapped to the model, so an export writes them from it rather than carrying them over.
        const ImportedScript both = importMegatronScript(head + "--bf16 --grad-reduce-in-bf16 --accumulate-allreduce-grads-in-fp32\n", "g.sh");
        QVERIFY(!findFlag(both, "--grad-reduce-in-bf16") && !findFlag(both, "--accumulate-allreduce-grads-in-fp32"));
        QVERIFY(!grads("--bf16").accumulate_allreduce_grads_in_fp32);
        QVERIFY(grads("--bf16").fp32Gradients());
        QCOMPARE(grads("--bf16 --grad-reduce-in-bf16").accumulate_allreduce_grads_in_fp32, std::optional<bool>(false));
        QVERIFY(!grads("--fp16").fp32Gradients());
        QCOMPARE(grads("--fp16 --accumulate-allreduce-grads-in-fp32").accumulate_allreduce_grads_in_fp32, std::optional<bool>(true));
    }

    void dropoutFlags()
    {
        // Megatron-LM's --attention-dropout and --hidden-dropout, 0.1 each when not given.
        const std::string head = llamaLaunch();
        const ImportedScript plain = importMegatronScript(head + "\n", "d.sh");
        QCOMPARE(plain.model.attention_dropout, 0.1);
        QCOMPARE(plain.model.hidden_dropout, 0.1);
        const ImportedScript given = importMegatronScript(head + "--attention-dropout 0 --hidden-dropout \"0.05\"\n", "d.sh");
        QCOMPARE(given.model.attention_dropout, 0.0);
        QCOMPARE(given.model.hidden_dropout, 0.05);
        QVERIFY(given.invalid_values.empty());
        // A value that is not a probability: warned, listed, and Megatron-LM's default kept.
        const ImportedScript bad = importMegatronScript(head + "--hidden-dropout 1.5\n", "d.sh");
        QCOMPARE(bad.model.hidden_dropout, 0.1);
        QVERIFY(hasWarning(bad, "--hidden-dropout 1.5: expected a number from 0 to 1; 0.1 is used"));
        QCOMPARE(bad.invalid_values.size(), std::size_t(1));
        QCOMPARE(bad.invalid_values.front().flag, std::string("--hidden-dropout"));
        // Python's float() refuses hexadecimal, and so does the import.
        QCOMPARE(importMegatronScript(head + "--hidden-dropout 0x0.1p0\n", "d.sh").invalid_values.size(), std::size_t(1));
        const ImportedScript unset = importMegatronScript(head + "--attention-dropout ${DROPOUT}\n", "d.sh");
        QCOMPARE(unset.model.attention_dropout, 0.1);
        QVERIFY(!unset.invalid_values.empty()
                && unset.invalid_values.front().detail.find("pass the script's arguments with --script-args") != std::string::npos);
    }

    void crossEntropyFusionFlags()
    {
        // --cross-entropy-loss-fusion, with --cross-entropy-fusion-impl native (the default) or te.
        const std::string head = llamaLaunch();
        auto training = [&](const std::string& flags) { return importMegatronScript(head + flags + "\n", "c.sh").model.training; };
        QVERIFY(!training("").cross_entropy_loss_fusion);
        const TrainingSpec native = training("--cross-entropy-loss-fusion");
        QVERIFY(native.cross_entropy_loss_fusion);
        QCOMPARE(native.cross_entropy_fusion_impl, CrossEntropyFusionImpl::Native);
        const ImportedScript te = importMegatronScript(head + "--cross-entropy-loss-fusion --cross-entropy-fusion-impl te\n", "c.sh");
        QVERIFY(te.model.training.cross_entropy_loss_fusion);
        QCOMPARE(te.model.training.cross_entropy_fusion_impl, CrossEntropyFusionImpl::TE);
        QVERIFY(!findFlag(te, "--cross-entropy-loss-fusion") && !findFlag(te, "--cross-entropy-fusion-impl"));
        // The implementation alone changes nothing: Megatron-LM runs the unfused loss.
        const ImportedScript implOnly = importMegatronScript(head + "--cross-entropy-fusion-impl te\n", "c.sh");
        QVERIFY(!implOnly.model.training.cross_entropy_loss_fusion);
        QCOMPARE(implOnly.model.training.cross_entropy_fusion_impl, CrossEntropyFusionImpl::Native);
        QVERIFY(hasWarning(implOnly, "--cross-entropy-fusion-impl without --cross-entropy-loss-fusion"));
        // A quoted value is the value; an unset variable is said.
        QCOMPARE(training("--cross-entropy-loss-fusion --cross-entropy-fusion-impl \"te\"").cross_entropy_fusion_impl,
                 CrossEntropyFusionImpl::TE);
        const ImportedScript unset = importMegatronScript(head + "--cross-entropy-loss-fusion --cross-entropy-fusion-impl ${CE}\n", "c.sh");
        QCOMPARE(unset.model.training.cross_entropy_fusion_impl, CrossEntropyFusionImpl::Native);
        QVERIFY(hasWarning(unset, "--cross-entropy-fusion-impl ${CE}: the implementation comes from a variable"));
    }

    void fp8RecipeFlag()
    {
        // --fp8-recipe (Megatron-LM's choices tensorwise, delayed, mxfp8, blockwise, custom;
        // default delayed) with --fp8-format.
        const std::string head = llamaLaunch();
        auto import = [&](const std::string& flags) { return importMegatronScript(head + flags + "\n", "r.sh"); };
        QCOMPARE(import("--fp8-format hybrid").model.training.fp8_recipe, Fp8Recipe::Delayed);
        QCOMPARE(import("--fp8-format hybrid --fp8-recipe tensorwise").model.training.fp8_recipe, Fp8Recipe::Tensorwise);
        QCOMPARE(import("--fp8-format e4m3 --fp8-recipe \"mxfp8\"").model.training.fp8_recipe, Fp8Recipe::MXFP8);
        const ImportedScript blockwise = import("--fp8-format e4m3 --fp8-recipe blockwise");
        QCOMPARE(blockwise.model.training.fp8_recipe, Fp8Recipe::Blockwise);
        QVERIFY(!findFlag(blockwise, "--fp8-recipe"));   // read, so not carried as another flag
        // Without FP8 it scales nothing.
        const ImportedScript alone = import("--fp8-recipe mxfp8");
        QCOMPARE(alone.model.training.fp8_recipe, Fp8Recipe::Delayed);
        QVERIFY(hasWarning(alone, "--fp8-recipe without --fp8-format: nothing runs in FP8; not read"));
        // A custom quantizer is costed as delayed scaling, and said.
        const ImportedScript custom = import("--fp8-format hybrid --fp8-recipe custom");
        QCOMPARE(custom.model.training.fp8_recipe, Fp8Recipe::Delayed);
        QVERIFY(hasWarning(custom, "--fp8-recipe custom: the quantizer factory's casts are not modelled"));
        // Argparse refuses other choices; an unset variable is said.
        const ImportedScript bad = import("--fp8-format hybrid --fp8-recipe mxfp4");
        QCOMPARE(bad.invalid_values.size(), std::size_t(1));
        QCOMPARE(bad.invalid_values.front().flag, std::string("--fp8-recipe"));
        const ImportedScript unset = import("--fp8-format hybrid --fp8-recipe ${RECIPE}");
        QCOMPARE(unset.model.training.fp8_recipe, Fp8Recipe::Delayed);
        QVERIFY(hasWarning(unset, "--fp8-recipe ${RECIPE}: the recipe comes from a variable the script does not set"));
    }

    void mpirunProcesses()
    {
        // mpirun starts one process per rank: -np in all and a count per node.
        const std::string entry = "python pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
                                  "--seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1\n";
        // Open MPI's -npernode and --map-by ppr:M:node, MPICH's -ppn, and -np alone (one node).
        const struct {
            const char* launch;
            int nodes, perNode;
        } cases[] = {{"mpirun -np 16 -npernode 8 ", 2, 8},
                     {"mpirun --np=32 --map-by ppr:8:node ", 4, 8},
                     {"mpiexec -n 8 -ppn 4 ", 2, 4},
                     {"mpirun -np 8 ", 1, 8}};
        for (const auto& c : cases) {
            const ImportedScript s = importMegatronScript(c.launch + entry, "m.sh");
            QCOMPARE(s.nnodes, c.nodes);
            QCOMPARE(s.nproc_per_node, c.perNode);
        }
        QVERIFY(hasWarning(importMegatronScript("mpirun -np 8 " + entry, "m.sh"), "mpirun -np 8 without a count per node"));
    }

    void whatAScriptRunsInstead()
    {
        // No launch command: the error names what the file is or runs instead.
        auto refusal = [](const std::string& text, const std::string& name) {
            try {
                importMegatronScript(text, name);
            } catch (const InputError& e) {
                return std::string(e.what());
            }
            return std::string("accepted");
        };
        QVERIFY(refusal("PP=1 TP=1 bash ./sbatch_benchmarking.sh --moe-router-force-load-balancing\n", "run.sh")
                    .find("line 1 runs another script (./sbatch_benchmarking.sh), which is not followed (import that script "
                          "itself, with --script-args for the words it is given)") != std::string::npos);
        // Under a process launcher (Pai-Megatron-Patch's mpi_run_pretrain_llama3.sh).
        const std::string mpi = refusal("mpirun -np 16 --allow-run-as-root bash entry.sh pretrain_llama.py \"$OPTIONS\"\n", "mpi.sh");
        QVERIFY2(mpi.find("line 1 runs another script (entry.sh under mpirun), which is not followed (import that script itself, "
                          "with --script-args") != std::string::npos,
                 mpi.c_str());
        const std::string yaml = refusal("# train\nsystem:\n  tensor_model_parallel_size: 2\nmodel:\n  num_layers: 32\n", "train.yaml");
        QVERIFY2(yaml.find("the file looks like a YAML configuration") != std::string::npos, yaml.c_str());
        QVERIFY(yaml.find("Megatron-MoE-ModelZoo's runner prints its command with DRY_RUN=1") != std::string::npos);
        QVERIFY(refusal("defaults:\n  - _self_\nexperiment:\n  exp_name: x\n", "config.txt").find("YAML") != std::string::npos);
        QVERIFY(refusal(std::string("\x7f" "ELF\0\0", 6), "a.out").find("not a text file (a NUL byte at byte 5)") != std::string::npos);
    }

    void flagsMegatronRefusesOrIgnores()
    {
        const std::string head = llamaLaunch();
        auto import = [&](const std::string& flags) { return importMegatronScript(head + flags + "\n", "f.sh"); };
        // Deprecated flags validate_args refuses (arguments.py): said, and not read.
        const ImportedScript ckpt = import("--checkpoint-activations");
        QCOMPARE(ckpt.parallel.recompute, Recompute::None);
        QVERIFY(hasWarning(ckpt, "--checkpoint-activations is no longer valid (Megatron-LM exits"));
        QVERIFY(!findFlag(ckpt, "--checkpoint-activations"));   // not carried into an export
        const ImportedScript batch = import("--batch-size 4");
        QVERIFY(hasWarning(batch, "--batch-size is no longer valid"));
        QVERIFY(!findFlag(batch, "--batch-size"));
        // Block recompute of more layers than a rank holds recomputes all of them (Megatron-Core
        // checkpoints layer l while l < --recompute-num-layers): 4 layers per rank at PP 8.
        const ImportedScript block = import("--pipeline-model-parallel-size 8 --recompute-granularity full "
                                            "--recompute-method block --recompute-num-layers 10");
        const Plan plan = planFromScript(block, test::cluster("H800:8x8"), DeviceCatalog::builtin());
        QCOMPARE(plan.stages.front().recompute, Recompute::Full);
        QCOMPARE(plan.stages.front().recompute_layers, 0);
        // An unquoted variable the script does not set before the entry splits into no word.
        const ImportedScript unset = importMegatronScript(
            "torchrun $DISTRIBUTED_ARGS pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1\n",
            "u.sh");
        QCOMPARE(unset.entry_script, std::string("pretrain_gpt.py"));
        QVERIFY(!findFlag(unset, "pretrain_gpt.py"));
        QVERIFY(hasWarning(unset, "torchrun ${DISTRIBUTED_ARGS}: a variable the script does not set"));
        // Flags that change time or memory the model does not follow are said.
        const ImportedScript other = import("--num-experts 8 --moe-router-topk 2 --moe-expert-capacity-factor 1.0 --optimizer sgd "
                                            "--context-parallel-size 2 --cp-comm-type a2a "
                                            "--use-precision-aware-optimizer --exp-avg-dtype bf16 --main-grads-dtype fp32");
        QVERIFY(hasWarning(other, "--moe-expert-capacity-factor is not modelled"));
        QVERIFY(hasWarning(other, "--optimizer sgd is not modelled"));
        QVERIFY(hasWarning(other, "--cp-comm-type a2a is not modelled"));
        QVERIFY(hasWarning(other, "--exp-avg-dtype bf16 is not modelled"));
        QVERIFY(!hasWarning(other, "--main-grads-dtype"));
        QVERIFY(!hasWarning(import("--optimizer adam --cp-comm-type p2p"), "not modelled"));
        // Where the flag changes nothing (CP 1, a dense model) nothing is said.
        QVERIFY(!hasWarning(import("--cp-comm-type a2a --moe-expert-capacity-factor 1.0"), "not modelled"));
    }

    void scriptModelIsValidated()
    {
        // A model Megatron-LM would refuse is refused with the script and the flag, not
        // with the model's JSON path: importing keeps it (with warnings) for an editor.
        const std::string head = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 32 --num-attention-heads 32 "
                                 "--seq-length 4096 --bf16 ";
        auto whereOf = [](const ImportedScript& s) -> std::string {
            try {
                validateScriptModel(s);
            } catch (const InputError& e) {
                if (e.file() != s.file)
                    return "error names file " + e.file();
                return e.where() + ": " + e.detail();
            }
            return "accepted";
        };
        const ImportedScript missing = importMegatronScript(head + "\n", "nohidden.sh");
        QVERIFY(hasWarning(missing, "no --hidden-size"));
        QCOMPARE(whereOf(missing), std::string("--hidden-size: missing: Megatron-LM needs it (a positive integer) and the "
                                               "launch command read (line 1: torchrun pretrain_gpt.py) does not give it"));
        // Without --num-layers, values read against it (a --moe-layer-freq list, an embedding
        // counted in the split) are not what is wrong: the missing flag is named.
        const ImportedScript noLayers = importMegatronScript(
            "torchrun --nproc_per_node 8 pretrain_gpt.py --hidden-size 1024 --num-attention-heads 16 --seq-length 4096 --bf16 "
            "--num-experts 8 --moe-layer-freq '([0]*2+[1]*30)' --pipeline-model-parallel-size 4 "
            "--account-for-embedding-in-pipeline-split\n", "nolayers.sh");
        QVERIFY2(whereOf(noLayers).rfind("--num-layers: missing: Megatron-LM needs it", 0) == 0, whereOf(noLayers).c_str());
        const ImportedScript nan = importMegatronScript(head + "--hidden-size nan\n", "nan.sh");
        QCOMPARE(whereOf(nan), std::string("--hidden-size: line 1: expected an integer from 1 to 100000000, got \"nan\""));
        // A variable the script leaves unset (an argument not given): where its value comes from.
        const ImportedScript unset = importMegatronScript(head + "--hidden-size $HIDDEN\n", "unset.sh");
        QVERIFY2(whereOf(unset).find("got \"${HIDDEN}\" (a variable the script does not set when read as given: pass the "
                                     "script's arguments with --script-args or its environment with --script-env)")
                     != std::string::npos,
                 whereOf(unset).c_str());
        // validateModel's top-k rule, named by the flag: 9 of 8 experts.
        const std::string topk = whereOf(importMegatronScript(head + "--hidden-size 4096 --num-experts 8 --moe-router-topk 9\n", "k.sh"));
        QVERIFY2(topk.rfind("--moe-router-topk: ", 0) == 0 && topk.find("got 9") != std::string::npos, topk.c_str());
        // 7 sequences do not split into micro-batches of 2.
        const std::string gbs = whereOf(importMegatronScript(head + "--hidden-size 4096 --global-batch-size 7 --micro-batch-size 2\n", "b.sh"));
        QVERIFY2(gbs.rfind("--global-batch-size: ", 0) == 0, gbs.c_str());
        // Windows line ends: bash reads a backslash before CR LF as escaping the CR, and the next line as a new command, so the
        // flags after the first line are not the launcher's; the message says why.
        const std::string crlf = whereOf(importMegatronScript("torchrun pretrain_gpt.py \\\r\n  --num-layers 2 --hidden-size 64 \\\r\n"
                                                              "  --num-attention-heads 2 --seq-length 128\r\n",
                                                              "crlf.sh"));
        QVERIFY2(crlf.find("missing: Megatron-LM needs it") != std::string::npos
                     && crlf.find("Windows CRLF line ends") != std::string::npos,
                 crlf.c_str());
        // A global batch of 0 is refused (Megatron-LM takes its default only when the flag is absent).
        QCOMPARE(whereOf(importMegatronScript(head + "--hidden-size 4096 --global-batch-size 0\n", "b0.sh")),
                 std::string("--global-batch-size: line 1: expected an integer from 1 to 100000000, got \"0\""));
        // --num-layers 0 says what was expected.
        const ImportedScript zero = importMegatronScript("torchrun pretrain_gpt.py --num-layers 0 --hidden-size 64 "
                                                         "--num-attention-heads 2 --seq-length 128\n",
                                                         "zero.sh");
        QCOMPARE(whereOf(zero), std::string("--num-layers: line 1: expected an integer from 1 to 100000000, got \"0\""));
        QCOMPARE(whereOf(importMegatronScript(head + "--hidden-size 4096\n", "ok.sh")), std::string("accepted"));
        // A layer pattern of 31 entries for 32 layers: Megatron-LM asserts the length.
        const std::string freq = whereOf(importMegatronScript(
            head + "--hidden-size 4096 --num-experts 8 --moe-layer-freq \"([0]*3+[1]*28)\"\n", "freq.sh"));
        QCOMPARE(freq, std::string("--moe-layer-freq: expected an integer >= 1 or a 0/1 list of --num-layers = 32 entries, "
                                   "got \"([0]*3+[1]*28)\""));
        QCOMPARE(whereOf(importMegatronScript(head + "--hidden-size 4096 --num-experts 8 --moe-layer-freq \"([0]*4+[1]*28)\"\n",
                                              "freq32.sh")),
                 std::string("accepted"));
        // A dispatcher Megatron-LM's argparse does not offer.
        QCOMPARE(whereOf(importMegatronScript(head + "--hidden-size 4096 --num-experts 8 --moe-token-dispatcher-type a2a\n", "d.sh")),
                 std::string("--moe-token-dispatcher-type: expected allgather, alltoall or flex, got \"a2a\""));
        // Megatron-Core asserts ETP == 1 for MoE layers with bias (reference section 3, "Bias
        // in MoE"); bias is on by default and ETP defaults to TP, so TP 2 alone trips it.
        const std::string moe = head + "--hidden-size 4096 --num-experts 8 --sequence-parallel ";
        const std::string etp = whereOf(importMegatronScript(moe + "--expert-tensor-parallel-size 2\n", "etp.sh"));
        QVERIFY2(etp.rfind("--expert-tensor-parallel-size: ", 0) == 0 && etp.find("ETP 2 with the linear bias on") != std::string::npos,
                 etp.c_str());
        const std::string byTp = whereOf(importMegatronScript(moe + "--tensor-model-parallel-size 2\n", "tp.sh"));
        QVERIFY2(byTp.rfind("--tensor-model-parallel-size: ", 0) == 0 && byTp.find("ETP defaults to TP") != std::string::npos,
                 byTp.c_str());
        QCOMPARE(whereOf(importMegatronScript(moe + "--tensor-model-parallel-size 2 --expert-tensor-parallel-size 1\n", "etp1.sh")),
                 std::string("accepted"));
        QCOMPARE(whereOf(importMegatronScript(moe + "--tensor-model-parallel-size 2 --disable-bias-linear\n", "nobias.sh")),
                 std::string("accepted"));
        // planFromScript checks the same before it places anything.
        try {
            planFromScript(nan, test::cluster("H800:1x8"), DeviceCatalog::builtin());
            QFAIL("a script with --hidden-size nan must be refused");
        } catch (const InputError& e) {
            QCOMPARE(e.file(), std::string("nan.sh"));
            QCOMPARE(e.where(), std::string("--hidden-size"));
        }
        // A process count torchrun cannot start, written as it stands, is refused, as --nnodes 0
        // is; a variable left unexpanded gets the assumption, and the warning says what
        // --nproc_per_node takes.
        for (const char* n : {"0", "-2", "eight"}) {
            const ImportedScript nproc = importMegatronScript(std::string("torchrun --nproc_per_node ") + n
                                                                  + " pretrain_gpt.py --num-layers 2\n",
                                                              "n.sh");
            QVERIFY(!nproc.invalid_values.empty());
            QCOMPARE(nproc.invalid_values.front().flag, std::string("--nproc_per_node"));
            QCOMPARE(nproc.invalid_values.front().detail,
                     std::string("--nproc_per_node ") + n
                         + (n[0] == 'e' ? " is no process count, which torchrun refuses (it takes an integer, gpu, cpu, xpu or auto)"
                                        : " starts no worker process"));
        }
        const ImportedScript huge = importMegatronScript("torchrun --nproc_per_node 99999999 pretrain_gpt.py --num-layers 2\n", "h.sh");
        QVERIFY(!huge.invalid_values.empty());
        QCOMPARE(huge.invalid_values.front().detail,
                 std::string("--nproc_per_node 99999999 is more processes than the 4096 devices a node may have"));
        const ImportedScript unsetCount = importMegatronScript("torchrun --nproc_per_node $GPUS pretrain_gpt.py --num-layers 2\n", "u.sh");
        QVERIFY(hasWarning(unsetCount, "--nproc_per_node ${GPUS}: expected an integer from 1 to 1000000; 1 is assumed"));
        QVERIFY(unsetCount.invalid_values.empty() || unsetCount.invalid_values.front().flag != "--nproc_per_node");
    }

    void scriptPlanIsValidated()
    {
        // The configuration on a cluster gets the plan document's checks, named by flag:
        // block recompute of 9 layers on ranks of 8 (32 layers over PP 4).
        const ImportedScript s = importMegatronScript(
            "torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
            "--num-attention-heads 32 --seq-length 4096 --bf16 --pipeline-model-parallel-size 4 --micro-batch-size 1 "
            "--global-batch-size 64 --recompute-granularity full --recompute-method block --recompute-num-layers 9\n",
            "rc.sh");
        // Megatron-Core runs it, recomputing every layer of a rank (layer l is checkpointed while
        // l < --recompute-num-layers), so the plan recomputes all 8 of each stage.
        const Plan all = planFromScript(s, test::cluster("H800:4x8"), DeviceCatalog::builtin());
        for (const StagePlan& st : all.stages)
            QCOMPARE(st.recompute_layers, 0);
        // A configuration the plan's checks refuse is named by flag: a global batch of 60 on
        // DP 8 with micro-batches of 1.
        const ImportedScript vpp = importMegatronScript(
            "torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
            "--num-attention-heads 32 --seq-length 4096 --bf16 --pipeline-model-parallel-size 4 --micro-batch-size 1 "
            "--global-batch-size 60\n",
            "rc.sh");
        try {
            planFromScript(vpp, test::cluster("H800:4x8"), DeviceCatalog::builtin());
            QFAIL("a global batch that is not a multiple of MBS x DP must be refused");
        } catch (const InputError& e) {
            QCOMPARE(e.file(), std::string("rc.sh"));
            QVERIFY2(e.where().find("--global-batch-size") != std::string::npos, e.what());
        }
    }

    void blockRecomputeCountsEveryModelChunk()
    {
        // Megatron-LM's block method recomputes the first --recompute-num-layers layers of each
        // model chunk: megatron/core/recompute.py loops over num_layers_per_pipeline_rank =
        // len(self.layers) of one chunk's TransformerBlock (Megatron-LM d98e8a64; the reference
        // says "per pipeline stage", section 5). With VPP 2 and 8 layers per rank, block 2
        // recomputes 2 + 2 = 4 layers of a rank, which is what the plan must cost.
        const std::string head = "torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                 "--num-attention-heads 32 --seq-length 4096 --bf16 --tensor-model-parallel-size 2 "
                                 "--pipeline-model-parallel-size 4 --micro-batch-size 1 --global-batch-size 64 "
                                 "--recompute-granularity full --recompute-method block ";
        ImportedScript s = importMegatronScript(head + "--num-layers-per-virtual-pipeline-stage 4 --recompute-num-layers 2\n", "vpp.sh");
        QCOMPARE(s.parallel.vpp, 2);
        QCOMPARE(s.parallel.recompute_layers, 2);   // the flag's value, per chunk
        Plan plan = planFromScript(s, test::cluster("H800:4x8"), DeviceCatalog::builtin());
        for (const StagePlan& st : plan.stages)
            QCOMPARE(st.recompute_layers, 4);
        // Block 4 of chunks of 4 is every layer (0 = all).
        s = importMegatronScript(head + "--num-layers-per-virtual-pipeline-stage 4 --recompute-num-layers 4\n", "vpp4.sh");
        plan = planFromScript(s, test::cluster("H800:4x8"), DeviceCatalog::builtin());
        for (const StagePlan& st : plan.stages)
            QCOMPARE(st.recompute_layers, 0);
        // A layout's own chunks: rank 0 holds 3 + 5 layers, so block 4 recomputes 3 + 4 = 7 of 8.
        s = importMegatronScript(head + "--pipeline-model-parallel-layout 'Et*3|t*8|t*8|t*8|t*5|||L' --recompute-num-layers 4\n",
                                 "layout.sh");
        QCOMPARE(s.parallel.vpp, 2);
        QCOMPARE(s.parallel.layer_split, (std::vector<int>{8, 8, 8, 8}));
        plan = planFromScript(s, test::cluster("H800:4x8"), DeviceCatalog::builtin());
        QCOMPARE(plan.stages[0].recompute_layers, 7);
        QCOMPARE(plan.stages[1].recompute_layers, 4);   // 8 + 0: the first 4 of the first chunk
        // Without VPP the count is per rank, as before.
        s = importMegatronScript(head + "--recompute-num-layers 2\n", "novpp.sh");
        plan = planFromScript(s, test::cluster("H800:4x8"), DeviceCatalog::builtin());
        QCOMPARE(plan.stages[0].recompute_layers, 2);
    }

    void accountForFlagsCountInTheVirtualPipeline()
    {
        // Reference section 2: "VPP = (num_layers [+1 with embedding accounting] [+1 with loss
        // accounting]) / PP / this value" for --num-layers-per-virtual-pipeline-stage.
        // 30 layers + embedding + loss = 32 over PP 4 = 8 per rank, 4 per chunk: VPP 2.
        const ImportedScript s = importMegatronScript(
            "torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py --num-layers 30 --hidden-size 4096 "
            "--num-attention-heads 32 --seq-length 4096 --bf16 --tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 "
            "--num-layers-per-virtual-pipeline-stage 4 --account-for-embedding-in-pipeline-split "
            "--account-for-loss-in-pipeline-split --micro-batch-size 1 --global-batch-size 64\n",
            "account.sh");
        QCOMPARE(s.parallel.vpp, 2);
        QVERIFY(!hasWarning(s, "no interleaving assumed"));
        QCOMPARE(s.parallel.layer_split, (std::vector<int>{7, 8, 8, 7}));
        // The embedding takes a place in rank 0's first chunk, the loss in the last rank's last.
        QCOMPARE(s.parallel.layer_chunks, (std::vector<std::vector<int>>{{3, 4}, {4, 4}, {4, 4}, {4, 3}}));
    }

    void flagscaleMeshesAreRead()
    {
        // Reference section 9's example (examples/llama3/conf/train/8b_hetero.yaml flattened):
        // meshes 2 1 1 4 1 | 4 1 1 2 1, split 18 14, types A800 A100, MBS 1, GBS 16. The
        // built-in device catalog has no A800 (hapmoe presets devices), and labels are matched
        // to catalog types, so H800 stands in for it as mesh 0's type; everything else is the
        // example's.
        const ImportedScript s = importMegatronScript(heteroScript(""), "hetero.sh");
        QVERIFY(s.invalid_values.empty());
        QVERIFY(!hasWarning(s, "not read"));
        const ParallelConfig& p = s.parallel;
        QVERIFY(p.hetero());
        QCOMPARE(p.meshes.size(), std::size_t(2));
        const ProcessMesh& m0 = p.meshes[0];
        const ProcessMesh& m1 = p.meshes[1];
        QCOMPARE(m0.device_type, std::string("H800"));
        QCOMPARE(m1.device_type, std::string("A100"));
        QCOMPARE((std::vector<int>{m0.tp, m0.cp, m0.ep, m0.dp, m0.pp}), (std::vector<int>{2, 1, 1, 4, 1}));
        QCOMPARE((std::vector<int>{m1.tp, m1.cp, m1.ep, m1.dp, m1.pp}), (std::vector<int>{4, 1, 1, 2, 1}));
        QCOMPARE(m0.etp, 2);   // no ETP flag: each mesh's TP
        QCOMPARE(m1.etp, 4);
        QCOMPARE(m0.first_stage, 0);
        QCOMPARE(m1.first_stage, 1);
        // Mesh i runs MBS_i = DP0 * MBS / DP_i: 4 * 1 / 2 = 2.
        QCOMPARE(m0.micro_batch_size, 1);
        QCOMPARE(m1.micro_batch_size, 2);
        QCOMPARE(p.layer_split, (std::vector<int>{18, 14}));
        QCOMPARE(p.global_batch_size, 16);
        QVERIFY(p.hetero_cpu_communication);
        QVERIFY(p.stage_recompute.empty());

        // Placed on one node of each type: one stage per mesh, 4 micro-batches everywhere.
        const Cluster c = test::cluster("H800:1x8,A100-80GB:1x8");
        const std::vector<int> ids = test::nodeIds(c);
        const Plan plan = planFromScript(s, c, DeviceCatalog::builtin());
        QCOMPARE(plan.target, Target::FlagScale);
        QCOMPARE(plan.pp(), 2);
        QCOMPARE(plan.vpp, 1);
        QCOMPARE(plan.global_batch_size, 16);
        QCOMPARE(plan.numMicrobatches(), 4);
        const StagePlan& a = plan.stages[0];
        const StagePlan& b = plan.stages[1];
        QCOMPARE(a.device_type, std::string("H800"));
        QCOMPARE(b.device_type, std::string("A100-80GB"));
        QCOMPARE((std::vector<int>{a.first_layer, a.num_layers, b.first_layer, b.num_layers}), (std::vector<int>{0, 18, 18, 14}));
        // A dense model: ETP 1 and EDP the stage's 8 devices, as the search's plans have them
        // (ETP's default, TP, only has to divide the mesh).
        QCOMPARE((std::vector<int>{a.tp, a.cp, a.dp, a.ep, a.etp, a.edp}), (std::vector<int>{2, 1, 4, 1, 1, 8}));
        QCOMPARE((std::vector<int>{b.tp, b.cp, b.dp, b.ep, b.etp, b.edp}), (std::vector<int>{4, 1, 2, 1, 1, 8}));
        QCOMPARE(a.micro_batch_size, 1);
        QCOMPARE(b.micro_batch_size, 2);
        QCOMPARE(a.micro_batch_size * a.dp * 4, 16);   // same micro-batch count M = 4 on both meshes
        QCOMPARE(b.micro_batch_size * b.dp * 4, 16);
        QCOMPARE(a.devices.size(), std::size_t(1));
        QCOMPARE(a.devices[0].node, ids[0]);
        QCOMPARE(a.devices[0].count, 8);
        QCOMPARE(b.devices[0].node, ids[1]);
        QVERIFY(deploymentProblems(plan, s.model, c, DeviceCatalog::builtin(), Target::FlagScale).empty());
        validatePlanDocument(PlanDocument{s.model, c, plan, std::nullopt, std::nullopt, {}}, DeviceCatalog::builtin(), "");

        // FlagScale sorts ranks by the position of their type in --hetero-device-types, not by
        // node order: with the A100 node first the H800 node still holds mesh 0.
        const Cluster swapped = test::cluster("A100-80GB:1x8,H800:1x8");
        const Plan back = planFromScript(s, swapped, DeviceCatalog::builtin());
        QCOMPARE(back.stages[0].device_type, std::string("H800"));
        QCOMPARE(back.stages[0].devices[0].node, test::nodeIds(swapped)[1]);
        QCOMPARE(back.stages[1].devices[0].node, test::nodeIds(swapped)[0]);
    }

    void flagscaleRankOrderAcrossNodes()
    {
        // Two H800 nodes around a 910B node, no NODE_HOSTS: the H800 mesh (TP2 DP4 PP2) takes
        // the logical ranks of both H800 nodes (global ranks 0-7 and 16-23), the 910B mesh those
        // of node 1; inside the H800 mesh Megatron's tp-cp-ep-dp-pp order puts its two stages
        // on one node each.
        const ImportedScript s = importMegatronScript(
            "torchrun --nnodes 3 --nproc_per_node 8 flagscale/train/train_gpt.py --num-layers 24 --hidden-size 1024 "
            "--num-attention-heads 16 --seq-length 2048 --bf16 --untie-embeddings-and-output-weights "
            "--pipeline-model-parallel-size 3 --micro-batch-size 2 --global-batch-size 32 --sequence-parallel --enable-hetero "
            "--hetero-process-meshes 2 1 1 4 2 1 1 1 8 1 --hetero-device-types H800 910B --hetero-pipeline-layer-split 8 8 8\n",
            "order.sh");
        const Cluster c = test::cluster("H800:1x8,910B:1x8,H800:1x8");
        const std::vector<int> ids = test::nodeIds(c);
        const Plan plan = planFromScript(s, c, DeviceCatalog::builtin());
        QCOMPARE(plan.pp(), 3);
        QCOMPARE(plan.stages[0].devices.size(), std::size_t(1));
        QCOMPARE(plan.stages[0].devices[0].node, ids[0]);
        QCOMPARE(plan.stages[1].devices[0].node, ids[2]);
        QCOMPARE(plan.stages[2].devices[0].node, ids[1]);
        QCOMPARE(plan.stages[2].device_type, std::string("910B-376T"));   // label "910B" is the catalog's alias
        QCOMPARE(plan.stages[0].micro_batch_size, 2);
        QCOMPARE(plan.stages[2].micro_batch_size, 1);                       // DP0 4 x MBS 2 / DP 8
    }

    void flagscalePerStageRecompute()
    {
        // FlagScale's per-stage lists ([n_stages, n0, flag0, n1, flag1, ...], reference section
        // 9): stage 0 never recomputes, stage 1 recomputes 3 of its 4 micro-batches (the plan
        // takes the majority and says so), block of 5 layers on stage 1 from the num-layers list.
        const std::string lists = "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1 "
                                  "--recompute-granularity-per-stage-micro-batch '[1, 4, 0]' '[1, 3, 1, 1, 0]' "
                                  "--recompute-method-per-stage-micro-batch '[2, 4, 1]' "
                                  "--recompute-num-layers-per-stage-micro-batch '[1, 4, 0]' '[1, 4, 5]' ";
        const ImportedScript s = importMegatronScript(heteroScript(lists), "hetero.sh");
        QVERIFY2(s.invalid_values.empty(), s.invalid_values.empty() ? "" : s.invalid_values.front().detail.c_str());
        QCOMPARE(s.parallel.stage_recompute.size(), std::size_t(2));
        QVERIFY(!s.parallel.stage_recompute[0].full);
        QVERIFY(s.parallel.stage_recompute[1].full);
        QCOMPARE(s.parallel.stage_recompute[1].layers, 5);
        QVERIFY(hasWarning(s, "stage 1 recomputes 3 of its 4 micro-batches; a plan has one setting per stage: full recompute is "
                              "assumed for all of them, as for the majority"));
        const Plan plan = planFromScript(s, test::cluster("H800:1x8,A100-80GB:1x8"), DeviceCatalog::builtin());
        QCOMPARE(plan.stages[0].recompute, Recompute::None);
        QCOMPARE(plan.stages[1].recompute, Recompute::Full);
        QCOMPARE(plan.stages[1].recompute_layers, 5);
        // Python tuples without brackets are literals FlagScale accepts too; a count reaching the
        // stage's layers recomputes all of them.
        const ImportedScript t = importMegatronScript(
            heteroScript("--recompute-granularity full --recompute-method block --recompute-num-layers 2 "
                         "--recompute-num-layers-per-stage-micro-batch '1, 4, 2' '1, 4, 20' "),
            "hetero.sh");
        QVERIFY(t.invalid_values.empty());
        QCOMPARE(t.parallel.stage_recompute[0].layers, 2);
        QCOMPARE(t.parallel.stage_recompute[1].layers, 0);
        // Without the per-stage lists the global block count applies to every stage.
        const ImportedScript g = importMegatronScript(
            heteroScript("--recompute-granularity full --recompute-method block --recompute-num-layers 16 "), "hetero.sh");
        const Plan gp = planFromScript(g, test::cluster("H800:1x8,A100-80GB:1x8"), DeviceCatalog::builtin());
        QCOMPARE(gp.stages[0].recompute_layers, 16);   // 16 of 18
        QCOMPARE(gp.stages[1].recompute_layers, 0);    // all 14
    }

    void flagscaleRuleErrors_data()
    {
        QTest::addColumn<QString>("replace");   // "old=>new" in the script, or extra flags
        QTest::addColumn<QString>("message");
        QTest::newRow("five ints per mesh")
            << "2 1 1 4 1 4 1 1 2 1=>2 1 1 4 1 4 1 1 2"
            << "hetero.sh: --hetero-process-meshes: expected five integers per mesh (TP CP EP DP PP), got 9: \"2 1 1 4 1 4 1 1 2\"";
        QTest::newRow("split sum")
            << "--hetero-pipeline-layer-split 18 14=>--hetero-pipeline-layer-split 18 10"
            << "hetero.sh: --hetero-pipeline-layer-split: expected 2 layer counts (one per pipeline stage, the sum of the meshes' PP) "
               "that sum to --num-layers 32, got 2 counts summing to 28: \"18 10\"";
        QTest::newRow("split count")
            << "--hetero-pipeline-layer-split 18 14=>--hetero-pipeline-layer-split 10 8 14"
            << "hetero.sh: --hetero-pipeline-layer-split: expected 2 layer counts (one per pipeline stage, the sum of the meshes' PP) "
               "that sum to --num-layers 32, got 3 counts summing to 32: \"10 8 14\"";
        QTest::newRow("sum of PP")
            << "--pipeline-model-parallel-size 2=>--pipeline-model-parallel-size 3"
            << "hetero.sh: --pipeline-model-parallel-size: expected 2, the sum of the meshes' PP in --hetero-process-meshes "
               "(1 + 1; FlagScale's pre_validate_args asserts it), got 3";
        QTest::newRow("mesh MBS integral")
            << "2 1 1 4 1 4 1 1 2 1=>2 1 1 4 1 2 1 1 3 1"
            << "hetero.sh: --hetero-process-meshes: mesh 1 has DP 3, which does not divide DP0 x --micro-batch-size = 4 x 1 = 4: "
               "FlagScale runs it with micro-batch size DP0 x MBS / DP = 4/3, which must be an integer";
        QTest::newRow("CP 1")
            << "2 1 1 4 1 4 1 1 2 1=>2 2 1 2 1 4 1 1 2 1"
            << "hetero.sh: --hetero-process-meshes: expected CP 1 in every mesh (FlagScale's ParallelContext asserts "
               "context_parallel_size == 1), mesh 0 has CP 2";
        QTest::newRow("no VPP")
            << "--num-layers-per-virtual-pipeline-stage 9"
            << "hetero.sh: --num-layers-per-virtual-pipeline-stage: expected no virtual pipeline with --hetero-process-meshes "
               "(FlagScale's heterogeneous mode does not support it: pre_validate_args)";
        QTest::newRow("label per mesh")
            << "--hetero-device-types H800 A100=>--hetero-device-types H800"
            << "hetero.sh: --hetero-device-types: expected one label per mesh (2 meshes in --hetero-process-meshes), got 1: \"H800\"";
        QTest::newRow("current type among labels")
            << "--hetero-current-device-type H800=>--hetero-current-device-type H100"
            << "hetero.sh: --hetero-current-device-type: expected one of --hetero-device-types (H800 A100), got \"H100\"";
        QTest::newRow("ETP per mesh")
            << "--expert-tensor-parallel-size-per-process-mesh 1"
            << "hetero.sh: --expert-tensor-parallel-size-per-process-mesh: expected one value per mesh (2 meshes in "
               "--hetero-process-meshes), got 1: \"1\"";
        QTest::newRow("meshes needed")
            << "--hetero-process-meshes 2 1 1 4 1 4 1 1 2 1=>"
            << "hetero.sh: --enable-hetero: needs --hetero-process-meshes (TP CP EP DP PP per mesh): FlagScale's heterogeneous "
               "mode builds one process mesh per entry (pre_validate_args asserts it is given)";
        QTest::newRow("tied embeddings")
            << "--untie-embeddings-and-output-weights=>"
            << "hetero.sh: --hetero-process-meshes: tied embeddings (no --untie-embeddings-and-output-weights) need the first and "
               "last mesh to have the same TP (FlagScale's pre_validate_args asserts it), got TP 2 and 4";
        QTest::newRow("recompute micro-batches")
            << "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1 "
               "--recompute-granularity-per-stage-micro-batch '[1, 4, 0]' '[1, 3, 1]'"
            << "hetero.sh: --recompute-granularity-per-stage-micro-batch: expected the micro-batch counts n0, n1, ... of "
               "\"[1, 3, 1]\" to sum to the 4 micro-batches of an iteration (GBS / (MBS x DP0)), got 3";
        QTest::newRow("recompute stages")
            << "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1 --recompute-granularity-per-stage-micro-batch '[1, 4, 1]'"
            << "hetero.sh: --recompute-granularity-per-stage-micro-batch: expected lists [n_stages, n0, flag0, n1, flag1, ...] "
               "whose n_stages sum to the 2 pipeline stages, got 1";
        QTest::newRow("recompute list form")
            << "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1 --recompute-granularity-per-stage-micro-batch '[2, 4]'"
            << "hetero.sh: --recompute-granularity-per-stage-micro-batch: expected lists [n_stages, n0, flag0, n1, flag1, ...] of "
               "integers >= 0, one value per run of stages, got \"[2, 4]\"";
        QTest::newRow("recompute needs full")
            << "--recompute-granularity-per-stage-micro-batch '[2, 4, 1]'"
            << "hetero.sh: --recompute-granularity-per-stage-micro-batch: needs --recompute-granularity full and "
               "--recompute-method (FlagScale's post_validate_args asserts both)";
        // Megatron-LM's own recompute rules (TransformerConfig.__post_init__; reference
        // section 5), which FlagScale inherits: a method is required with full and refused
        // with selective.
        QTest::newRow("full needs a method")
            << "--recompute-granularity full"
            << "hetero.sh: --recompute-granularity: full needs --recompute-method uniform or block (Megatron-LM's "
               "TransformerConfig raises without it)";
        QTest::newRow("selective takes no method")
            << "--recompute-granularity selective --recompute-method uniform"
            << "hetero.sh: --recompute-method: must not be given with --recompute-granularity selective (Megatron-LM's "
               "TransformerConfig raises); remove it or use --recompute-granularity full";
        QTest::newRow("unknown method")
            << "--recompute-granularity full --recompute-method all"
            << "hetero.sh: --recompute-method: expected uniform or block, got all";
        QTest::newRow("full needs a layer count")
            << "--recompute-granularity full --recompute-method uniform"
            << "hetero.sh: --recompute-granularity: full needs --recompute-num-layers (layers per recomputed chunk with "
               "uniform, per pipeline rank with block; Megatron-LM's TransformerConfig raises without it; a script "
               "written for Megatron-LM before September 2023, whose default was 1, means --recompute-num-layers 1)";
    }

    void flagscaleRuleErrors()
    {
        QFETCH(QString, replace);
        QFETCH(QString, message);
        std::string text = heteroScript("");
        const std::string r = replace.toStdString();
        if (const std::size_t arrow = r.find("=>"); arrow != std::string::npos) {
            const std::string from = r.substr(0, arrow);
            const std::size_t at = text.find(from);
            QVERIFY2(at != std::string::npos, from.c_str());
            text.replace(at, from.size(), r.substr(arrow + 2));
        } else {
            text = heteroScript(r + " ");
        }
        const ImportedScript s = importMegatronScript(text, "hetero.sh");
        QVERIFY(!s.invalid_values.empty());
        try {
            validateScriptModel(s);
            QFAIL("the script was accepted");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromStdString(e.what()), message);
        }
        // planFromScript refuses it the same way.
        try {
            planFromScript(s, test::cluster("H800:1x8,A100-80GB:1x8"), DeviceCatalog::builtin());
            QFAIL("planFromScript accepted the script");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromStdString(e.what()), message);
        }
    }

    void flagscalePlacementErrors()
    {
        const ImportedScript s = importMegatronScript(heteroScript(""), "hetero.sh");
        const auto errorOn = [&](const std::string& cluster) {
            try {
                planFromScript(s, test::cluster(cluster), DeviceCatalog::builtin());
            } catch (const InputError& e) {
                return std::string(e.what());
            }
            return std::string("accepted");
        };
        // A label that matches no node of the cluster.
        QCOMPARE(errorOn("H800:2x8"),
                 std::string("hetero.sh: --hetero-device-types: label A100 (mesh 1) matches no node of cluster H800:2x8 (its device "
                             "types: H800)"));
        // A node whose type is none of the labels.
        QCOMPARE(errorOn("H800:1x8,910B:1x8,A100:1x8"),
                 std::string("hetero.sh: --hetero-device-types: node rank 1 (node1, 910B-376T) matches no label of "
                             "--hetero-device-types (H800 A100): FlagScale needs every process's --hetero-current-device-type "
                             "among them"));
        // More processes than the meshes hold.
        std::string text = heteroScript("");
        text.replace(text.find("--nnodes 2"), 10, "--nnodes 3");
        const ImportedScript wide = importMegatronScript(text, "hetero.sh");
        QCOMPARE(wide.nnodes, 3);
        try {
            planFromScript(wide, test::cluster("H800:2x8,A100:1x8"), DeviceCatalog::builtin());
            QFAIL("accepted");
        } catch (const InputError& e) {
            QCOMPARE(std::string(e.what()),
                     std::string("hetero.sh: --hetero-process-meshes: the meshes hold 16 ranks (the sum of TP*CP*DP*PP), the script "
                                 "starts 24 processes; FlagScale stops with \"World size mismatch\""));
        }
        // The same world, but meshes of 4 and 12 ranks on nodes of 8 and 8: the A100 mesh would
        // take H800 processes.
        const ImportedScript mismatch = importMegatronScript(
            "torchrun --nnodes 2 --nproc_per_node 8 flagscale/train/train_gpt.py --num-layers 32 --hidden-size 4096 "
            "--num-attention-heads 32 --seq-length 4096 --bf16 --untie-embeddings-and-output-weights "
            "--pipeline-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 16 --enable-hetero "
            "--hetero-process-meshes 1 1 1 4 1 3 1 1 4 1 --hetero-device-types H800 A100\n",
            "hetero.sh");
        QVERIFY(mismatch.invalid_values.empty());
        try {
            planFromScript(mismatch, test::cluster("H800:1x8,A100:1x8"), DeviceCatalog::builtin());
            QFAIL("accepted");
        } catch (const InputError& e) {
            QCOMPARE(std::string(e.what()),
                     std::string("hetero.sh: --hetero-process-meshes: mesh 1 (A100) would take logical rank 4, a process of node0 "
                                 "(H800): FlagScale gives the meshes consecutive ranks in the order of --hetero-device-types "
                                 "(processes per label H800 8, A100 8; the meshes of each label hold H800 4, A100 12)"));
        }
    }

    void argparseValueCountsAndChoices()
    {
        // Megatron-LM's argparse (nargs and choices of megatron/training/arguments.py at
        // d98e8a64, resources/megatron-flags.json) stops the run at a word it cannot place; so
        // does the import, naming the flag and the word.
        const std::string head = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --hidden-size 2048 "
                                 "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 --bf16 "
                                 "--micro-batch-size 1 --global-batch-size 64 --vocab-size 32000 ";
        auto refusal = [&](const std::string& extra) { return refusalOf(head + extra + "\n", "v.sh"); };
        QCOMPARE(refusal("--lr 1e-4 0.5"),
                 std::string("v.sh: --lr: line 1: takes one value, and \"0.5\" follows \"1e-4\": Megatron-LM refuses the extra "
                             "argument (argparse: unrecognized arguments)"));
        QCOMPARE(refusal("--swiglu true"),
                 std::string("v.sh: --swiglu: line 1: takes no value (a switch), and \"true\" follows it: Megatron-LM refuses the "
                             "extra argument (argparse: unrecognized arguments)"));
        QCOMPARE(refusal("--swiglu=true"),
                 std::string("v.sh: --swiglu: line 1: takes no value (a switch), got \"--swiglu=true\": Megatron-LM refuses it "
                             "(argparse: ignored explicit argument)"));
        QCOMPARE(refusal("--rampup-batch-size 16 16"),
                 std::string("v.sh: --rampup-batch-size: line 1: takes 3 values, got 2: Megatron-LM refuses it (argparse: "
                             "expected 3 values)"));
        QCOMPARE(refusal("--normalization rmsnorm"),
                 std::string("v.sh: --normalization: line 1: expected one of LayerNorm, RMSNorm, got \"rmsnorm\" (Megatron-LM's "
                             "choices, which are case-sensitive)"));
        // Flags of any number of values, and a switch given the usual way, pass.
        QCOMPARE(refusal("--data-path 0.5 /a 0.5 /b --swiglu --recompute-modules core_attn mlp"), std::string("accepted"));

        // A variable the script does not set (EXTRA_ARGS) after a flag's values is no value of
        // that flag: bash splits it into the words the environment gives. It stands on its own.
        const ImportedScript env = importMegatronScript(head + "--tensor-model-parallel-size 2 $EXTRA_ARGS --lr 1e-4 $MORE\n", "e.sh");
        validateScriptModel(env);
        QCOMPARE(env.parallel.tp, 2);
        QVERIFY(findFlag(env, "${EXTRA_ARGS}") && findFlag(env, "${EXTRA_ARGS}")->values.empty());
        QVERIFY(findFlag(env, "${MORE}"));
        QCOMPARE(findFlag(env, "--lr")->values, std::vector<std::string>{"1e-4"});
        // Where the flag still needs its value, the variable is the value; a flag of any number
        // of values takes one variable, and the next stands on its own.
        const ImportedScript path = importMegatronScript(head + "--data-path $DATA $EXTRA_ARGS\n", "d.sh");
        QCOMPARE(findFlag(path, "--data-path")->values, std::vector<std::string>{"${DATA}"});
        QVERIFY(findFlag(path, "${EXTRA_ARGS}"));
        // "--flag=value" is one value, whatever the flag's nargs (argparse).
        QVERIFY(refusal("--cp-comm-type=p2p a2a").find("takes one value or more, and \"a2a\" follows \"p2p\"") != std::string::npos);
        // A FlagScale entry script keeps FlagScale's own choices (--distributed-backend flagcx).
        const ImportedScript fs = importMegatronScript(
            "torchrun --nproc_per_node 8 flagscale/train/train_gpt.py --num-layers 24 --hidden-size 2048 --num-attention-heads 16 "
            "--seq-length 2048 --max-position-embeddings 2048 --bf16 --micro-batch-size 1 --global-batch-size 64 --vocab-size 32000 "
            "--distributed-backend flagcx\n",
            "fs.sh");
        validateScriptModel(fs);
    }

    void megatronConfigurationRules()
    {
        // Rules Megatron-LM checks before training, refused at import with the flag:
        // --bf16 with --fp16 (validate_args), top-1 softmax routing without
        // --moe-router-pre-softmax (TransformerConfig), --cp-comm-type a2a+p2p without
        // --hierarchical-context-parallel-sizes (reference section 2).
        const std::string head = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
                                 "--num-attention-heads 16 --seq-length 4096 --max-position-embeddings 4096 "
                                 "--micro-batch-size 1 --global-batch-size 64 --vocab-size 32000 ";
        auto refusal = [&](const std::string& extra) { return refusalOf(head + extra + "\n", "r.sh"); };
        QCOMPARE(refusal("--bf16 --fp16"),
                 std::string("r.sh: --bf16: line 1: --bf16 and --fp16 are both given; Megatron-LM refuses the pair (one precision for "
                             "the whole model)"));
        const std::string moe = "--bf16 --num-experts 8 --moe-ffn-hidden-size 1024 --moe-router-topk 1 ";
        QCOMPARE(refusal(moe),
                 std::string("r.sh: --moe-router-topk: line 1: top-1 routing with softmax scores needs --moe-router-pre-softmax "
                             "(Megatron-LM raises \"Please use --moe-router-pre-softmax when topk is 1\")"));
        QCOMPARE(refusal(moe + "--moe-router-pre-softmax"), std::string("accepted"));
        QCOMPARE(refusal(moe + "--moe-router-score-function sigmoid"), std::string("accepted"));
        QCOMPARE(refusal("--bf16 --context-parallel-size 4 --cp-comm-type a2a+p2p"),
                 std::string("r.sh: --cp-comm-type: line 1: a2a+p2p needs --hierarchical-context-parallel-sizes, whose product is CP 4; "
                             "Megatron-LM refuses it without"));
        QCOMPARE(refusal("--bf16 --context-parallel-size 4 --cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 2 2"),
                 std::string("accepted"));
        // --moe-layer-freq as a list expression: the characters ,0-9[]()+* only (section 7).
        QCOMPARE(refusal(moe + "--moe-router-pre-softmax --moe-layer-freq '[0]*3 + [1]*5'"),
                 std::string("r.sh: --moe-layer-freq: line 1: the list expression \"[0]*3 + [1]*5\" may hold only the characters "
                             ",0-9[]()+* (no spaces): Megatron-LM refuses it"));
        QCOMPARE(refusal(moe + "--moe-router-pre-softmax --moe-layer-freq '[0]*3+[1]*5'"), std::string("accepted"));
    }

    void pipelineSplitRules()
    {
        // Megatron-LM's rules for an uneven split (reference section 4): each was a warning
        // and an even split before, which is not what the script runs. 12 layers, PP 4.
        const std::string head = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 12 --hidden-size 1024 "
                                 "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 --bf16 "
                                 "--micro-batch-size 1 --global-batch-size 64 --vocab-size 32000 --pipeline-model-parallel-size 4 ";
        auto refusal = [&](const std::string& extra) { return refusalOf(head + extra + "\n", "p.sh"); };
        // 4b: the 10 layers after a first rank of 2 do not split over 3 ranks; 3 of them do.
        QCOMPARE(refusal("--decoder-first-pipeline-num-layers 2"),
                 std::string("p.sh: --decoder-first-pipeline-num-layers: the 10 layers left after the first and last ranks do not split "
                             "evenly over the 3 middle ranks (Megatron-LM asserts it)"));
        QCOMPARE(refusal("--decoder-first-pipeline-num-layers 3"), std::string("accepted"));
        QCOMPARE(importMegatronScript(head + "--decoder-first-pipeline-num-layers 3 --decoder-last-pipeline-num-layers 1\n", "p.sh")
                     .parallel.layer_split,
                 (std::vector<int>{3, 4, 4, 1}));
        // 4b with VPP: each count a multiple of VPP, and VPP given as the chunk count.
        QVERIFY(refusal("--decoder-first-pipeline-num-layers 3 --num-virtual-stages-per-pipeline-rank 2").find(
                    "must each be a multiple of VPP") != std::string::npos);
        QVERIFY(refusal("--decoder-first-pipeline-num-layers 3 --num-layers-per-virtual-pipeline-stage 1").find(
                    "cannot be combined with --decoder-first/last-pipeline-num-layers") != std::string::npos);
        QVERIFY(refusal("--decoder-first-pipeline-num-layers 3 --account-for-loss-in-pipeline-split").find(
                    "cannot be combined with the account-for flags") != std::string::npos);
        // A layout gives the split itself: validate_args allows one of it and the VPP flags,
        // TransformerConfig raises with the first/last or account-for flags.
        QVERIFY(refusal("--pipeline-model-parallel-layout 'Et*3|t*3|t*3|t*3L' --num-layers-per-virtual-pipeline-stage 3")
                    .find("--num-layers-per-virtual-pipeline-stage: cannot be combined with --pipeline-model-parallel-layout")
                != std::string::npos);
        QVERIFY(refusal("--pipeline-model-parallel-layout 'Et*3|t*3|t*3|t*3L' --account-for-loss-in-pipeline-split")
                    .find("--account-for-loss-in-pipeline-split: cannot be combined with --pipeline-model-parallel-layout")
                != std::string::npos);
        // 4a: 5 stages on PP 4; a layout whose decoder layers are not --num-layers.
        QVERIFY(refusal("--pipeline-model-parallel-layout 'Et*3|t*3|t*3|t*3|L'").find("5 stages are not a multiple of PP 4")
                != std::string::npos);
        QVERIFY(refusal("--pipeline-model-parallel-layout 'Et*3|t*3|t*3|t*2L'").find("the layout holds 11 decoder layers, --num-layers is 12")
                != std::string::npos);
        // A rank with the embedding alone: Megatron-LM runs it, a plan cannot hold it.
        QCOMPARE(refusal("--pipeline-model-parallel-layout 'E|t*4|t*4|t*4L'"),
                 std::string("p.sh: --pipeline-model-parallel-layout: pipeline rank 0 holds 0 decoder layers; Megatron-LM runs that, "
                             "the planner does not model it (a pipeline rank holds at least one decoder layer)"));
        // An empty model chunk on a rank that holds layers is kept: at VPP 2 rank 0's first
        // chunk is the embedding alone and rank 3's last the loss alone (virtual stage
        // c * PP + r is chunk c of rank r).
        const ImportedScript emptyChunks = importMegatronScript(head + "--pipeline-model-parallel-layout 'E|t*2|t*2|t*2|t*2|t*2|t*2|L'\n", "p.sh");
        QCOMPARE(emptyChunks.parallel.vpp, 2);
        QCOMPARE(emptyChunks.parallel.layer_split, (std::vector<int>{2, 4, 4, 2}));
        QCOMPARE(emptyChunks.parallel.layer_chunks, (std::vector<std::vector<int>>{{0, 2}, {2, 2}, {2, 2}, {2, 0}}));
        // First and last ranks holding all layers: the middle ranks get none, which Megatron-LM
        // runs (the remainder 0 divides) and a plan cannot hold.
        QVERIFY(refusal("--decoder-first-pipeline-num-layers 6 --decoder-last-pipeline-num-layers 6").find(
                    "the first and last ranks hold all 12 layers and the 2 middle ranks none; Megatron-LM runs that") != std::string::npos);
        // 4c: 12 layers and the loss counted as one are 13, not a multiple of PP 4.
        QVERIFY(refusal("--account-for-loss-in-pipeline-split").find("13 layers, with the loss counted, do not split evenly over PP 4")
                != std::string::npos);
        QCOMPARE(refusal("--num-layers-per-virtual-pipeline-stage 2 --account-for-loss-in-pipeline-split"),
                 std::string("p.sh: --num-layers-per-virtual-pipeline-stage: 2 does not divide the 13 layers (the loss counted as a "
                             "layer) of PP 4 ranks evenly (Megatron-LM asserts it)"));
    }

    void unreadConstructsAreReported()
    {
        // `let` and (( )) assign as in bash (arithmeticCommandsAssign has more).
        // A flag line cut off from the launch command by a broken continuation (a comment line
        // inside the command) is a command of its own for bash: the launch runs without it.
        const std::string launch = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --hidden-size 64 "
                                   "--num-attention-heads 2 --seq-length 64 --max-position-embeddings 64 --bf16 --vocab-size 100 "
                                   "--micro-batch-size 1 --global-batch-size 8 --tensor-model-parallel-size ${TP:-1} \\\n";
        const ImportedScript s = importMegatronScript("let DP=4\n(( TP = 2 ))\n" + launch + "# a note\n--lr 1e-4\n", "c.sh");
        QVERIFY(!hasWarning(s, "is not evaluated"));
        QCOMPARE(s.parallel.tp, 2);   // ${TP:-1} after (( TP = 2 ))
        QVERIFY(hasWarning(s, "line 5: a command of its own starts with --lr: bash runs the launch command (line 3) without it"));
        QVERIFY(!findFlag(s, "--lr"));
    }

    void prefixAssignmentsAreTheCommandsOwn()
    {
        // Bash manual 3.7.4: NAME=value before a command goes to that command's environment
        // only; the shell's variables stay as they were (and a later prefix sees an earlier one).
        const std::string pre = "A=0\nA=1 B=$A true\nTP=2\nTP=8 true\n";
        for (const char* name : {"A", "B", "TP"})
            QCOMPARE(readerValue(pre, name), bashValue(pre, name));
        QCOMPARE(readerValue(pre, "TP"), std::string("<2><END>"));
        BashReader r("p.sh");
        r.read(pre);
        QCOMPARE(r.commands().front().environment, (std::vector<std::string>{"A=1", "B=1"}));
        QVERIFY(r.exportedVariables().empty());
        // The review's script: CUDA_VISIBLE_DEVICES=0 on a check before the launch is not the
        // launch's environment, and TP=4 on it does not set --tensor-model-parallel-size.
        const std::string launch = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
                                   "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 "
                                   "--micro-batch-size 1 --bf16 --tensor-model-parallel-size ${TP:-1}\n";
        const ImportedScript s = importMegatronScript(
            "CUDA_VISIBLE_DEVICES=0 python -c \"import torch\"\nTP=4 python -c \"print(1)\"\n" + launch, "cvd.sh");
        QCOMPARE(s.parallel.tp, 1);
        QVERIFY(s.environment.empty());
        // On the launch command itself the prefix is the launch's environment, exported as before;
        // so is env NAME=value.
        const ImportedScript own = importMegatronScript(
            "CUDA_DEVICE_MAX_CONNECTIONS=1 NCCL_IB_QPS_PER_CONNECTION=${QPS:-4} " + launch, "own.sh");
        QCOMPARE(own.environment, (std::vector<std::string>{"CUDA_DEVICE_MAX_CONNECTIONS=1", "NCCL_IB_QPS_PER_CONNECTION=4"}));
        QCOMPARE(own.environment_raw.at("NCCL_IB_QPS_PER_CONNECTION"), std::string("${QPS:-4}"));
        const ImportedScript viaEnv = importMegatronScript("env NCCL_DEBUG=INFO " + launch, "env.sh");
        QCOMPARE(viaEnv.environment, std::vector<std::string>{"NCCL_DEBUG=INFO"});
    }

    void andOrListsFollowTheTest()
    {
        // `test && cmd` runs cmd only when the test passes, `test || cmd` only when it fails
        // (manual 3.2.4), also with a { ...; } group. Each preamble is run by bash too.
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"TP=1\n[ -z \"$TP\" ] && TP=4", "TP"},
            {"TP=1\n[ -n \"$TP\" ] || TP=4", "TP"},
            {"TP=1\n[ -z \"$UNSET_IN_TEST\" ] && TP=4", "TP"},
            {"A=x\ntest \"$A\" = x && TP=4 || TP=2", "TP"},
            {"A=y\ntest \"$A\" = x && TP=4 || TP=2", "TP"},
            {"[[ -z \"$DISABLE_SP\" ]] || SP=--sequence-parallel", "SP"},
            {"PP=4\n[ \"$PP\" -eq 1 ] && { PP=2; VPP=3; }", "PP"},
            {"PP=4\n[ \"$PP\" -eq 1 ] && { PP=2; VPP=3; }", "VPP"},
            {"PP=1\n[ \"$PP\" -eq 1 ] && { PP=2; VPP=3; }", "VPP"},
            {"N=8\n! [ \"$N\" -gt 4 ] && N=4", "N"},
        };
        for (const auto& [pre, name] : cases) {
            const std::string expected = bashValue(pre, name);
            QVERIFY2(readerValue(pre, name) == expected, (pre + " -> " + expected).c_str());
        }
        QCOMPARE(readerValue("TP=1\n[ -z \"$TP\" ] && TP=4", "TP"), std::string("<1><END>"));
        // A test the text cannot decide (a file): read as if it passed, as before, and said.
        const ImportedScript s = importMegatronScript(
            "TP=1\n[ -f /tmp/use_tp4 ] && TP=4\ntorchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 2 "
            "--seq-length 64 --max-position-embeddings 64 --micro-batch-size 1 --tensor-model-parallel-size $TP\n",
            "file.sh");
        QCOMPARE(s.parallel.tp, 4);
        QVERIFY2(hasWarning(s, "line 2: the test `[ -f /tmp/use_tp4 ]` (line 2) before && cannot be decided from the text; "
                               "the command after it is read as if it ran"),
                 s.warnings.front().c_str());
    }

    void caseBlocksRunTheMatchingBranch()
    {
        // A case whose subject is known runs the first branch whose pattern matches (manual
        // 3.2.5.2), laid out on several lines or one, with "|" alternatives and "*".
        const std::string block = "case $SIZE in\n  small|tiny)\n    L=8\n    TP=1\n    ;;\n  large) L=32; TP=4 ;;\n"
                                  "  *) L=2 ;;\nesac\n";
        for (const std::string size : {"small", "tiny", "large", "other"}) {
            const std::string pre = "SIZE=${SIZE:-" + size + "}\n" + block;
            for (const char* name : {"L", "TP"})
                QVERIFY2(readerValue(pre, name) == bashValue(pre, name), (size + " " + name).c_str());
        }
        const std::string oneLine = "M=b\ncase \"$M\" in a) X=1;; b) X=2;; esac";
        QCOMPARE(readerValue(oneLine, "X"), bashValue(oneLine, "X"));
        QCOMPARE(readerValue(oneLine, "X"), std::string("<2><END>"));
        // A subject from outside the script: every branch in order (the last wins), and said,
        // naming the variables.
        BashReader r("c.sh");
        r.read("case $MODEL_SIZE in\n small) NUM_LAYERS=8; TP=1 ;;\n large) NUM_LAYERS=32; TP=4 ;;\nesac\n");
        QCOMPARE(r.variables().at("TP"), std::string("4"));
        QVERIFY(std::any_of(r.warnings().begin(), r.warnings().end(), [](const std::string& w) {
            return w.find("line 1: case $MODEL_SIZE: the subject is not known from the text, so every branch is read in order and "
                          "NUM_LAYERS, TP keep the values of the last branch that sets them") != std::string::npos;
        }));
    }

    void caseTerminatorsFallThrough()
    {
        // ";&" runs the next branch's commands without testing its patterns, ";;&" goes on
        // testing the next patterns (manual 3.2.5.2); each subject compared with bash, with the
        // terminators after a command and on lines of their own. By hand, as bash prints it:
        // a -> AB, b -> B, c -> C CD X STAR, d -> CD X STAR, e -> STAR.
        const std::string block = "R=\ncase $S in\n  a) R+=A ;&\n  b) R+=B ;;\n  c) R+=C\n  ;;&\n  c|d) R+=CD\n  ;&\n"
                                  "  x) R+=X ;;&\n  *) R+=STAR ;;\nesac\n";
        const std::vector<std::pair<std::string, std::string>> expected = {
            {"a", "AB"}, {"b", "B"}, {"c", "CCDXSTAR"}, {"d", "CDXSTAR"}, {"e", "STAR"}};
        for (const auto& [subject, r] : expected) {
            const std::string pre = "S=" + subject + "\n" + block;
            QCOMPARE(bashValue(pre, "R"), "<" + r + "><END>");
            QVERIFY2(readerValue(pre, "R") == bashValue(pre, "R"), subject.c_str());
        }
        // On one line, and with nothing after the last branch.
        for (const std::string pre : {"case z in z) A=one;& y) A+=two;& esac", "case z in z) A=one;;& y) A+=two;;& *) A+=three; esac"})
            QCOMPARE(readerValue(pre, "A"), bashValue(pre, "A"));
        QCOMPARE(readerValue("case z in z) A=one;;& y) A+=two;;& *) A+=three; esac", "A"), std::string("<onethree><END>"));
        // A subject the text does not give still reads every branch, in order.
        BashReader r("c.sh");
        r.read("case $MODE in\n  a) TP=1 ;&\n  b) PP=2 ;;&\n  *) EP=4 ;;\nesac\n");
        QCOMPARE(r.variables().at("TP"), std::string("1"));
        QCOMPARE(r.variables().at("PP"), std::string("2"));
        QCOMPARE(r.variables().at("EP"), std::string("4"));
    }

    void functionCallsAreFollowed()
    {
        // A function is defined where it is written and its body read where it is called, with
        // the call's arguments as $1 ... "$@" $# "$*", `shift`, `local` (and declare in a
        // function) put back on return, dynamic scope, `return`, prefix assignments seen inside
        // the call, redefinition and definitions in branches (manual 3.3, 4.1 and 4.2). Each
        // script is run by bash with torchrun a function that prints its arguments.
        const std::vector<std::string> scripts = {
            "run() { torchrun --nproc_per_node 8 pretrain_gpt.py \"$@\"; }; run --num-layers 32 --hidden-size 4096\n",
            "function run { torchrun pretrain_gpt.py \"$@\"; }\nrun --num-layers 2 \"a b\" ''\n",
            "function run() {\n  torchrun pretrain_gpt.py --tp $1 --all \"$@\" --count $# --star \"$*\" --third \"${3-unset}\" "
            "--fifth \"${5-unset}\" $5\n}\nrun 4 x 'y z'\n",
            "TP=8\nlaunch()\n{\n    local nodes=$1 TP=2\n    shift\n    torchrun --nnodes $nodes pretrain_gpt.py "
            "--tensor-model-parallel-size $TP \"$@\"\n    shift 9\n    torchrun after-shift.py $#\n}\nlaunch 2 --num-layers 16\n"
            "torchrun after.py --tp $TP --nodes ${nodes-unset}\n",
            "f() { torchrun a.py; return; torchrun b.py; }; f; torchrun c.py\n",
            "f() {\n  if [ \"$1\" = big ]; then\n    torchrun big.py\n    return 0\n  fi\n  torchrun small.py \"$@\"\n}\nf big\nf x y\n",
            "r() { torchrun r.py $1; [ \"$1\" -lt 3 ] && r $(( $1 + 1 )); }; r 1\n",
            "TP=1\nf() { torchrun e.py $TP; }\nTP=8 f\ntorchrun e2.py $TP\n",
            "u() { local A=1; v; }; v() { torchrun v.py ${A-unset}; }; u; v\n",
            "o() { inner() { torchrun inner.py \"$@\"; }; }; o; inner y\n",
            "f() { torchrun one.py; }; f; f() { torchrun two.py; }; f\n",
            "if [ -n \"$UNSET_X\" ]; then f() { torchrun a.py; }; else f() { torchrun b.py; }; fi; f\n",
            "main() { torchrun m.py --save ${1:-/ckpt} \"$@\"; }; main \"$@\"\n",
            "local X=1\ntorchrun e.py ${X-unset}\n",
            "X=1\nf() { local X; torchrun in.py ${X-unset}; X=2; }; f; torchrun out.py $X\n",
            "g() { declare Y=5; declare -g Z=6; export W=7; }; g; torchrun g.py ${Y-unset} ${Z-unset} ${W-unset}\n",
            "f() { [ -f /nonexistent/file ] && return; torchrun a.py; }; f\n",
            "never() { torchrun never.py; }\ntorchrun main.py --x 1\n",
            "function run\n{\n  torchrun x.py \"$@\"\n}\nrun a b\n",
            "run() { torchrun x.py \"$@\"; }\nrun a 2>&1 | cat\n",
            "run() {\n  if [ -n \"$1\" ]; then { torchrun a.py; }; fi\n  { torchrun b.py; }\n}\nrun x\nrun\n",
            "f() { case $1 in a) torchrun a.py ;& b) torchrun b.py ;; esac; }; f a; f b\n",
            "f() { torchrun f.py; }\nif [ -z \"$UNSET\" ]; then f; fi\n",
            "L=run\nrun() { torchrun r.py \"$@\"; }\n$L x\n",
            "A=(--x 1 \"--y z\")\nrun() { torchrun r.py \"$@\" $@; }\nrun \"${A[@]}\"\n",
            "run() { torchrun r.py \"${@:2}\" ${#1} ${1:1}; }\nrun abc d e\n",
            "f() { shift $((1+1)); torchrun f.py \"$@\"; }; f a b c\n",
            "A=(g)\nf() { local -a A=(l1 l2); torchrun f.py \"${A[@]}\"; }\nf\ntorchrun g.py \"${A[@]}\"\n",
            "f() { torchrun f.py \"$@\"; }; f '' x\n",
        };
        for (const std::string& script : scripts)
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
        // Two of them by hand: the call's arguments after the body's own, and `local` TP and
        // nodes gone after the call (the global TP 8 back, nodes unset).
        QCOMPARE(readerLaunches(scripts[0]), std::string("<--nproc_per_node><8><pretrain_gpt.py><--num-layers><32><--hidden-size><4096>\n"));
        QCOMPARE(readerLaunches(scripts[3]), std::string("<--nnodes><2><pretrain_gpt.py><--tensor-model-parallel-size><2><--num-layers><16>\n"
                                                         "<after-shift.py><2>\n<after.py><--tp><8><--nodes><unset>\n"));
        // What the text cannot decide is said: `return` under a file test (read on, as bash does
        // when the file is absent), `local` outside a function, $# of a call that passes the
        // script's own arguments (bash with arguments runs torchrun, without them it returns).
        QVERIFY(readerWarns(scripts[16], "line 1: return in function f runs after the test `[ -f /nonexistent/file ]` (line 1), "
                                         "which cannot be decided from the text; the rest of the function is read as if it did not return"));
        QVERIFY(readerWarns(scripts[13], "line 1: local outside a function: bash refuses it"));
        const std::string argc = "main() {\n  [ $# -lt 1 ] && return\n  torchrun m.py --count $#\n}\nmain \"$@\"\n";
        QCOMPARE(readerLaunches(argc), std::string("<m.py><--count><$#>\n"));
        QVERIFY(readerWarns(argc, "line 2: return in function main runs on a test that depends on $#, from the script's own "
                                  "arguments, which cannot be decided from the text; the rest of the function is read as if it "
                                  "did not return"));
        BashReader counted("argc.sh");
        counted.read(argc);
        // The launch command's findings: the call's "$@" first, then its own $#.
        QCOMPARE(counted.commands().back().warnings,
                 (std::vector<std::string>{"line 5: the script's own arguments ($@) are not known; expanded as empty",
                                           "line 3: $# in function main counts the script's own arguments, which are not known; kept as text"}));
    }

    void recursionIsBounded()
    {
        // A recursion the text does not end stops at 64 nested calls with a warning (bash
        // itself would recurse until it runs out of stack), and calls that double at each
        // level stop once 100,000 commands have been read in calls.
        BashReader deep("deep.sh");
        deep.read("r() { torchrun r.py; r; }\nr\n");
        QCOMPARE(deep.commands().size(), std::size_t(64));
        QVERIFY(std::any_of(deep.warnings().begin(), deep.warnings().end(), [](const std::string& w) {
            return w == "line 1: function r: calls nested 64 deep, a recursion the text does not end; this call is not followed, and "
                        "the commands it would run are not read";
        }));
        BashReader doubling("double.sh");
        doubling.read("f() { f; f; }\nf\n");
        QVERIFY(std::any_of(doubling.warnings().begin(), doubling.warnings().end(), [](const std::string& w) {
            return w.find("function calls have read more than 100000 commands; this call is not followed") != std::string::npos;
        }));
        // A body that is never closed is refused, as bash refuses the script.
        try {
            BashReader open("open.sh");
            open.read("run() {\n  torchrun x.py\n");
            QFAIL("an unclosed function body must be refused");
        } catch (const InputError& e) {
            QCOMPARE(std::string(e.what()), std::string("open.sh: line 1: function run: no } closes its body (bash: unexpected end of file)"));
        }
    }

    void launchInsideAFunction()
    {
        // The reviewer's script: the launch command in a function called with the model's
        // flags. Bash runs torchrun with the body's flags and then the call's.
        const std::string tail = "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
                                 "--max-position-embeddings 4096 --micro-batch-size 1 --bf16 --vocab-size 32000 --data-path $DATA\n";
        const ImportedScript s = importMegatronScript(
            "run() { torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 \"$@\"; }; run " + tail, "run.sh");
        QCOMPARE(refusalOf("run() { torchrun --nproc_per_node 8 pretrain_gpt.py \"$@\"; }; run " + tail, "run.sh"), std::string("accepted"));
        QCOMPARE(s.nproc_per_node, 8);
        QCOMPARE(s.model.num_layers, 32);
        QCOMPARE(s.model.seq_length, 4096);
        QCOMPARE(s.parallel.tp, 2);
        // A finding in the call's arguments is the launch command's.
        QVERIFY(hasWarning(s, "DATA is not set in the script"));
        // Called once from a main function that takes the script's arguments, multi-line.
        const ImportedScript m = importMegatronScript(
            "#!/bin/bash\nmain() {\n  local GPUS=${1:-4}\n  torchrun --nproc_per_node $GPUS pretrain_gpt.py \\\n    " + tail + "}\n"
            "main \"$@\"\n", "main.sh");
        QCOMPARE(m.nproc_per_node, 4);
        QCOMPARE(m.command_line, 4);
        QCOMPARE(m.model.hidden_size, 4096);
        // A launch command in a function nothing calls is not run by bash, so not read.
        QCOMPARE(refusalOf("launch() {\n  torchrun pretrain_gpt.py " + tail + "}\n", "uncalled.sh"),
                 std::string("uncalled.sh: no launch command found: expected torchrun, python -m torch.distributed.run or python "
                             "<entry>.py with Megatron-LM flags; the script defines functions whose commands bash does not run: "
                             "launch (line 1, never called)"));
    }

    void exitEndsTheReading()
    {
        // An exit that runs ends the script (manual 4.1): nothing after it is read, at the top
        // level, in an if or case branch, or in a function (nor what follows the call). Inside
        // ( ... ), or in a command of a pipeline or one run with &, it ends only that subshell
        // (manual 3.2.3, 3.2.4.3). Each script is run by bash too.
        const std::vector<std::string> scripts = {
            "torchrun a.py\nexit\ntorchrun b.py\n",
            "torchrun a.py; exit 3; torchrun b.py\n",
            "X=\nif [ -z \"$X\" ]; then torchrun a.py; exit 0; fi\ntorchrun b.py\n",
            "if [ -n \"$UNSET\" ]; then exit 1; fi\ntorchrun b.py\n",
            "case x in x) torchrun c.py; exit ;; esac; torchrun d.py\n",
            "case y in x) exit ;; *) torchrun e.py ;; esac; torchrun f.py\n",
            "[ 1 -eq 1 ] && exit; torchrun no.py\n",
            "[ 1 -eq 2 ] && exit; torchrun yes.py\n",
            "true || exit; torchrun y.py\n",
            "{ torchrun a.py; exit; }; torchrun b.py\n",
            "f() {\n  torchrun f.py\n  exit 2\n  torchrun g.py\n}\nf\ntorchrun h.py\n",
            "f() { torchrun f.py \"$@\"; exit; }; g() { f 1; torchrun g.py; }; g; torchrun h.py\n",
            "f() { if [ \"$1\" = stop ]; then exit 0; fi; torchrun f.py \"$1\"; }; f go; f stop; f never\n",
            "f() { return 1; }; f && exit; torchrun after-return.py\n",
            "( torchrun s.py; exit 1; torchrun t.py ); torchrun u.py\n",
            "(\n  torchrun s.py\n  exit\n)\ntorchrun u.py\n",
            "( ( torchrun deep.py; exit ); torchrun mid.py; exit 4 ); torchrun top.py\n",
            "f() { ( torchrun in.py; exit ); torchrun out.py; }; ( f; exit; torchrun never.py ); torchrun last.py\n",
            "f() { torchrun f.py; exit 0; }; f | cat; torchrun after-pipe.py\n",
            "echo x | exit 3; torchrun after-exit-pipe.py\n",
            "{ torchrun g.py; exit; } 2>&1 | cat; torchrun after-group.py\n",
            "f() { exit; }; f & wait; torchrun after-bg.py\n",
            "[ -f /nonexistent/x ] && exit 1\ntorchrun a.py\n",
        };
        for (const std::string& script : scripts)
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
        // Two of them by hand, and where the reading stopped (an exit in a subshell stops none).
        QCOMPARE(readerLaunches(scripts[1]), std::string("<a.py>\n"));
        QCOMPARE(readerLaunches(scripts[16]), std::string("<deep.py>\n<mid.py>\n<top.py>\n"));
        BashReader stopped("stop.sh");
        stopped.read(scripts[10]);
        QCOMPARE(stopped.exitLine(), 6);   // the call's line, where the script exits (the exit is on line 3)
        BashReader inner("inner.sh");
        inner.read(scripts[15]);
        QCOMPARE(inner.exitLine(), 0);
        // Under a test the text cannot decide (a file, a case subject from the environment) the
        // rest is read as if the exit did not run, as every branch of such a test is, and said;
        // one on the environment is a guard the real run passes (envGuardsReadOn).
        QVERIFY(readerWarns(scripts[22], "line 1: exit runs after the test `[ -f /nonexistent/x ]` (line 1), which cannot be "
                                         "decided from the text; the rest of the script is read as if it did not exit"));
        const std::string unknownCase = "case $MODE in\n  dry) exit 0 ;;\nesac\ntorchrun run.py\n";
        QCOMPARE(readerLaunches(unknownCase), std::string("<run.py>\n"));
        QVERIFY(readerWarns(unknownCase, "line 2: exit 0 depends on MODE, which the script does not set (its environment): "
                                         "read as not taken"));
        // A script that exits before its launch command has none, and the error says where it
        // exits; an exit after the launch command changes nothing.
        const std::string launch = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                   "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 "
                                   "--bf16 --vocab-size 32000\n";
        QCOMPARE(refusalOf("MODE=dry\nif [ \"$MODE\" = dry ]; then\n  echo \"dry run\" >&2\n  exit 1\nfi\n" + launch, "guard.sh"),
                 std::string("guard.sh: no launch command found: expected torchrun, python -m torch.distributed.run or python "
                             "<entry>.py with Megatron-LM flags; the script exits at line 4, and bash runs nothing after it"));
        QCOMPARE(refusalOf(launch + "exit 0\ntorchrun other.py\n", "end.sh"), std::string("accepted"));
    }

    void envGuardsReadOn()
    {
        // A usage guard on a variable the script does not set (its environment), on the
        // script's own arguments or on $# at the top level: bash run bare (no environment, no
        // arguments) takes it, the real run passes it. The exit is read as not taken, the
        // import gives the launch command, and one warning names the line and what it depends on.
        const std::string launch = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                                   "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 "
                                   "--bf16 --vocab-size 32000\n";
        const std::string guardEnv = "#!/bin/bash\n[ -z \"$DATA_PATH\" ] && exit 1\n" + launch;
        const std::string guardArgc = "if [ $# -lt 1 ]; then\n  echo \"usage: $0 DATA\" >&2\n  exit 1\nfi\n" + launch;
        const std::string guardParam = ": \"${CKPT:?set CKPT}\"\n" + launch;
        // Bash run bare stops at the first two.
        QCOMPARE(bashLaunches("torchrun a.py\n[ -z \"$DATA_PATH\" ] && exit 1\ntorchrun b.py\n"), std::string("<a.py>\n"));
        QCOMPARE(bashLaunches("torchrun a.py\nif [ $# -lt 1 ]; then exit 1; fi\ntorchrun b.py\n"), std::string("<a.py>\n"));
        for (const auto& [script, file] : {std::pair{guardEnv, "env.sh"}, std::pair{guardArgc, "argc.sh"},
                                           std::pair{guardParam, "param.sh"}}) {
            QCOMPARE(refusalOf(script, file), std::string("accepted"));
            const ImportedScript s = importMegatronScript(script, file);
            QCOMPARE(s.model.num_layers, 32);
            QCOMPARE(s.parallel.micro_batch_size, 1);
        }
        QCOMPARE(warningsWith(guardEnv, "exit 1"),
                 std::vector<std::string>{"line 2: exit 1 depends on DATA_PATH, which the script does not set (its environment): "
                                          "read as not taken"});
        QCOMPARE(warningsWith(guardArgc, "exit 1"),
                 std::vector<std::string>{"line 3: exit 1 depends on $#, from the script's own arguments: read as not taken"});
        // ${VAR:?message} is no exit for the reader: the command after it is read, and the
        // finding stays with the ":" command.
        BashReader param("param.sh");
        param.read(guardParam);
        QCOMPARE(param.exitLine(), 0);
        QVERIFY(std::any_of(param.commands().front().warnings.begin(), param.commands().front().warnings.end(),
                            [](const std::string& w) { return w.find("CKPT must be set for this script") != std::string::npos; }));

        // The other forms: $1 (also through a variable set from it), ${VAR:-} defaults, a
        // function called with "$@", a { ...; } group, a case on $#, the else of a guard. Each
        // reads on to the launch; several guards give one warning that lists them all.
        const std::vector<std::string> scripts = {
            "[ -n \"$1\" ] || exit 1\ntorchrun a.py\n",
            "DATA=\"${1:-${DATA:-}}\"\nif [ -z \"$DATA\" ]; then exit 2; fi\ntorchrun a.py $DATA\n",
            "[ -z \"${CKPT:-}\" ] && { echo usage; exit 1; }\ntorchrun a.py\n",
            "main() {\n  [ $# -ge 1 ] || exit 1\n  torchrun a.py \"$@\"\n}\nmain \"$@\"\n",
            "usage() { echo usage; exit 1; }\n[ \"$#\" -eq 0 ] && usage\ntorchrun a.py\n",
            "case $# in\n  0) exit 1 ;;\n  *) torchrun a.py ;;\nesac\n",
            "if [ -z \"$DATA_PATH\" ]; then\n  exit 1\nelse\n  torchrun a.py\nfi\n",
        };
        for (const std::string& script : scripts)
            QVERIFY2(readerLaunches(script).find("<a.py>") != std::string::npos, script.c_str());
        QCOMPARE(warningsWith(scripts[1], "exit 2"),
                 std::vector<std::string>{"line 2: exit 2 depends on $1, from the script's own arguments, and on DATA, which the "
                                          "script takes from its environment where it is set: read as not taken"});
        QCOMPARE(warningsWith(scripts[4], "exit 1"),
                 std::vector<std::string>{"line 2: exit 1 (line 1, in function usage) depends on $#, from the script's own "
                                          "arguments: read as not taken"});
        QCOMPARE(warningsWith(guardEnv + "if [ $# -lt 1 ]; then exit 3; fi\n", "exit"),
                 std::vector<std::string>{"line 2: exit 1 depends on DATA_PATH, which the script does not set (its environment); "
                                          "line 4: exit 3 depends on $#, from the script's own arguments: each read as not taken"});
        // A variable the script unset is empty in any environment: its test decides, as in bash.
        const std::string unsetFirst = "unset DATA\n[ -z \"$DATA\" ] && exit 1\ntorchrun a.py\n";
        QCOMPARE(readerLaunches(unsetFirst), bashLaunches(unsetFirst));

        // Exits decided by the script's own values still end the reading, as in bash, and so do
        // those in a function whose arguments the call gives.
        const std::vector<std::string> own = {
            "MODE=dry\n[ \"$MODE\" = dry ] && exit 0\ntorchrun a.py\n",
            "N=0\nif [ $N -lt 1 ]; then exit 1; fi\ntorchrun a.py\n",
            "DATA=${DATA_PATH:-/data}\nDATA=/fixed\n[ -n \"$DATA\" ] && exit 0\ntorchrun a.py\n",
            "f() { [ $# -lt 2 ] && exit 1; torchrun f.py \"$@\"; }\nf a b\nf a\ntorchrun never.py\n",
            "case go in go) torchrun a.py; exit ;; esac\ntorchrun b.py\n",
            "torchrun a.py\nset -- x\n[ 1 -eq 1 ] && exit 0\ntorchrun b.py\n",
        };
        for (const std::string& script : own)
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
        QCOMPARE(readerLaunches(own[3]), std::string("<f.py><a><b>\n"));
        BashReader dry("dry.sh");
        dry.read(own[0]);
        QCOMPARE(dry.exitLine(), 2);
        QVERIFY(warningsWith(own[0], "depends on").empty());
    }

    void exportedLaunchersReimport()
    {
        // Our own launchers guard NODE_RANK (the first argument or the environment) and
        // FlagScale's entry (FLAGSCALE_HOME) with `exit 2`: re-imported, the reading goes on
        // past them to the launch, with one warning for all the guards.
        std::ifstream in(test::dataFile("mixtral_h800_plan.json"));
        const std::string planText((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const PlanDocument megatron = readPlan(planText, "mixtral_h800_plan.json");
        ExportOptions flagscale;
        flagscale.format = LauncherFormat::FlagScale;
        for (const ExportOptions& o : {ExportOptions{}, flagscale}) {
            const ExportResult r = exportLauncher(o.format == LauncherFormat::FlagScale ? test::h800And910bPlan() : megatron, o);
            QVERIFY2(r.ok, r.refusal.c_str());
            QCOMPARE(refusalOf(r.script, "launch.sh"), std::string("accepted"));
            const std::vector<std::string> guards = warningsWith(r.script, "exit 2");
            QCOMPARE(guards.size(), std::size_t(1));
            QVERIFY2(guards[0].find("exit 2 depends on $1, from the script's own arguments, and on NODE_RANK, which the script "
                                    "takes from its environment where it is set")
                         != std::string::npos,
                     guards[0].c_str());
            if (o.format == LauncherFormat::FlagScale)
                QVERIFY2(guards[0].find("exit 2 depends on FLAGSCALE_HOME, which the script takes from its environment where it is set: each "
                                        "read as not taken")
                             != std::string::npos,
                         guards[0].c_str());
            const ImportedScript s = importMegatronScript(r.script, "launch.sh");
            QVERIFY(!std::any_of(s.warnings.begin(), s.warnings.end(),
                                 [](const std::string& w) { return w.find("cannot be decided") != std::string::npos; }));
            // Given the node rank, the guard is decided (its `=~` as bash matches it): no
            // warning for a rank in range; a rank out of range, or written with a leading zero
            // (bash's arithmetic would read 03 as octal), exits there.
            ScriptInputs rank;
            rank.arguments = {"1"};
            const ImportedScript one = importMegatronScript(r.script, "launch.sh", rank);
            for (const std::string& w : one.warnings)
                QVERIFY2(w.find("cannot be decided") == std::string::npos && w.find("depends on $1") == std::string::npos, w.c_str());
            for (const char* bad : {"9", "01"}) {
                rank.arguments = {bad};
                const std::string refused = refusalOf(r.script, "launch.sh", rank);
                QVERIFY2(refused.find("the script exits at line") != std::string::npos, refused.c_str());
            }
        }
    }

    void regexTestsMatchAsBash()
    {
        // [[ WORD =~ REGEX ]] is a POSIX extended expression matched anywhere in the word (bash
        // runs regcomp with REG_EXTENDED): the launchers' own NODE_RANK check, anchored and
        // unanchored expressions, alternatives and a negation, each against bash itself with
        // the arguments the run would give.
        const std::string script =
            "R=\"${1:-}\"\n"
            "if [[ ! \"$R\" =~ ^(0|[1-9][0-9]*)$ ]] || [[ \"$R\" -ge 4 ]]; then torchrun bad \"$R\"; exit 2; fi\n"
            "[[ $R =~ 1 ]] && torchrun has-one\n"
            "[[ x$R =~ ^x(2|3)$ ]] && torchrun two-or-three\n"
            "torchrun ok \"$R\"\n";
        for (const char* arg : {"0", "1", "2", "3", "4", "03", "10", "x", "-1"}) {
            ScriptInputs in;
            in.arguments = {arg};
            QVERIFY2(readerLaunchesWith(script, in) == bashLaunchesWith(script, in),
                     (std::string(arg) + ": reader " + readerLaunchesWith(script, in) + " bash " + bashLaunchesWith(script, in)).c_str());
        }
        ScriptInputs three;
        three.arguments = {"3"};
        QCOMPARE(readerLaunchesWith(script, three), std::string("<two-or-three>\n<ok><3>\n"));
    }

    void unsetRemovesFunctions()
    {
        // unset -f removes functions (several at once), and unset without options a variable
        // or, when no variable has the name, the function; -v removes only variables, -f with
        // -v or an unknown option nothing (bash's unset builtin). A call after it is an unknown
        // command; a subshell's unset stays in it. Each script is run by bash too.
        const std::vector<std::string> scripts = {
            "f() { torchrun f.py; }; unset -f f; f; torchrun after.py\n",
            "f() { torchrun f.py; }; g() { torchrun g.py; }; h() { torchrun h.py; }; unset -f f g; f; g; h\n",
            "f() { torchrun f.py; }; f=1; unset f; f; unset f; f; torchrun v.py ${f-unset}\n",
            "f() { torchrun f.py; }; unset -v f; f\n",
            "f() { torchrun f.py; }; unset -fv f; f\n",
            "f() { torchrun f.py; }; unset -x f; f\n",
            "f() { torchrun f.py; }; unset -- f; f\n",
            "f() { torchrun f.py; }; n=f; unset -f \"$n\"; f\n",
            "f() { torchrun one.py; }; unset -f f; f() { torchrun two.py; }; f\n",
            "f() { torchrun f.py; unset -f f; }; f; f\n",
            "f() { torchrun f.py; }; ( unset -f f; f ); f\n",
            "f() { torchrun f.py; }; if [ -n \"$UNSET\" ]; then unset -f f; fi; f\n",
            "A=1; B=(1 2); unset A B; torchrun a.py ${A-unset} ${B-unset}\n",
        };
        for (const std::string& script : scripts)
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
        QCOMPARE(readerLaunches(scripts[2]), std::string("<f.py>\n<v.py><unset>\n"));
        QVERIFY(readerWarns(scripts[4], "line 1: unset -f -v: bash cannot remove a function and a variable at once, and removes nothing"));
        // A launch command in a sourced file is not read, and DeepSpeed's launcher (here run
        // through eval) is not one the import reads: the error says where. Functions bash runs
        // from a trap or an if condition are not "never called".
        QCOMPARE(refusalOf("cleanup() { echo done; }\ntrap 'rm -f /tmp/x; cleanup' EXIT\nchk() { return 0; }\n"
                           "if chk x; then :; fi\nCMD=\"deepspeed pretrain_gpt.py --num-layers 2\"\neval $CMD\nsource ./env.sh\n",
                           "eval.sh"),
                 std::string("eval.sh: no launch command found: expected torchrun, python -m torch.distributed.run or python "
                             "<entry>.py with Megatron-LM flags; line 6 runs DeepSpeed's launcher (deepspeed), which this import "
                             "does not read; it sources another file (line 7), which is not followed"));
        // A launch command in a function removed before the call is not run: the error names
        // the function, the unset and the call that finds no such command (bash: "launch:
        // command not found").
        const std::string tail = "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
                                 "--max-position-embeddings 4096 --micro-batch-size 1 --bf16 --vocab-size 32000\n";
        QCOMPARE(refusalOf("launch() {\n  torchrun pretrain_gpt.py " + tail + "}\nunset -f launch\nlaunch\n", "gone.sh"),
                 std::string("gone.sh: no launch command found: expected torchrun, python -m torch.distributed.run or python "
                             "<entry>.py with Megatron-LM flags; the script defines functions whose commands bash does not run: "
                             "launch (line 1, removed by unset at line 4; the call at line 5 finds no such command)"));
        QVERIFY(refusalOf("launch() {\n  torchrun pretrain_gpt.py " + tail + "}\nunset launch\n", "gone.sh")
                    .ends_with("launch (line 1, removed by unset at line 4 and never called)"));
        // Defined again after the unset: the new body runs.
        QCOMPARE(readerLaunches("launch() { torchrun a.py; }\nunset -f launch\nlaunch() { torchrun b.py; }\nlaunch\n"),
                 std::string("<b.py>\n"));
    }

    void subshellFunctionBodies()
    {
        // run() ( ... ): a function whose body is a subshell is read where it is called, as a
        // subshell (manual 3.3): what it sets (variables, exports, functions, shift) is put back
        // after it, and an exit or return in it ends only the call. Each script is run by bash too.
        const std::vector<std::string> scripts = {
            "run() ( torchrun r.py \"$@\" )\nrun a b\n",
            "X=1\nrun() (\n  X=2\n  torchrun r.py $X \"$@\"\n)\nrun a\ntorchrun after.py $X\n",
            "f() ( torchrun f.py; exit 3; torchrun never.py )\nf\ntorchrun after.py\n",
            "f() ( return 5; torchrun never.py ); f; torchrun after.py\n",
            "function k ( torchrun k.py )\nk\n",
            "function k() ( torchrun k.py $1 )\nk 1\n",
            "never() ( torchrun never.py )\ntorchrun main.py\n",
            "f() ( local X=2; torchrun f.py $X ); X=1; f; torchrun g.py $X\n",
            "f() ( g() { torchrun g.py; }; g ); f; g\n",
            "f() ( export Y=1; shift; torchrun f.py \"$@\" ); f a b; torchrun g.py ${Y-unset}\n",
            "r() ( torchrun r.py $1; [ $1 -lt 3 ] && r $(( $1 + 1 )) ); r 1\n",
            "f() (\n  case $1 in\n    a) torchrun a.py ;;\n    (b) torchrun b.py ;;\n  esac\n)\nf a; f b\n",
            "if [ -n \"$UNSET\" ]; then f() ( torchrun a.py ); else f() ( torchrun b.py ); fi; f\n",
            "f() { local X=2; ( X=3; shift; exit ); torchrun in.py $X \"$@\"; }; X=1; f a b; torchrun out.py $X\n",
            "f() ( torchrun f.py \"$@\" ); f 1 2 | cat\n",
            "{ (torchrun a.py) }\nif (true) then torchrun then.py; fi\ncase x in x) (torchrun c.py) esac\n",
        };
        for (const std::string& script : scripts)
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
        QCOMPARE(readerLaunches(scripts[1]), std::string("<r.py><2><a>\n<after.py><1>\n"));
        QVERIFY(!readerWarns(scripts[0], "function run"));
        // What a subshell, a subshell function or a command of a pipeline sets stays in it.
        const std::string pre = "X=1\nf() ( X=2; Y=2 )\nf\ng() { Z=3; }\ng | cat\n( W=4; X=4 )";
        for (const char* name : {"X", "Y", "Z", "W"})
            QVERIFY2(readerValue(pre, name) == bashValue(pre, name), name);
        QCOMPARE(readerValue(pre, "X"), std::string("<1><END>"));
        // A body that is neither a group nor a subshell is still read where it is written.
        QVERIFY(readerWarns("f() if true; then torchrun x.py; fi\n",
                            "line 1: function f: a body that is not a { ... } group or a ( ... ) subshell is read where it is written"));
        // A subshell that is never closed is refused, as bash refuses the script; subshells
        // nested past any launch script's, or a recursion, are not followed, with a warning.
        try {
            BashReader open("open.sh");
            open.read("run() (\n  torchrun x.py\n");
            QFAIL("an unclosed subshell body must be refused");
        } catch (const InputError& e) {
            QCOMPARE(std::string(e.what()), std::string("open.sh: line 1: no ) closes the subshell ( opened here (bash: unexpected "
                                                        "end of file)"));
        }
        // Nor is an arithmetic command that is never closed: it would take the rest of the script.
        try {
            BashReader open("arith.sh");
            open.read("X=1\n(( X +\ntorchrun x.py\n");
            QFAIL("an unclosed (( must be refused");
        } catch (const InputError& e) {
            QCOMPARE(std::string(e.what()), std::string("arith.sh: line 2: no )) closes the arithmetic command (( opened here (bash: "
                                                        "unexpected end of file)"));
        }
        // A compound command never closed, or a reserved word out of place: bash stops reading
        // the script at it (bash -n: "syntax error: unexpected end of file", "syntax error near
        // unexpected token `fi'"), having run the whole commands before it. Said with the
        // line, and read on past it.
        QCOMPARE(warningsWith("X=1\nif [ -n \"$X\" ]; then\n  torchrun a.py\n", "syntax error"),
                 std::vector<std::string>{"line 2: a syntax error (unexpected end of the text: no fi closes the if opened at "
                                          "line 2), at which bash stops reading the script, so it runs nothing from line 2 on "
                                          "(bash -n shows it); the import reads on past it"});
        QCOMPARE(warningsWith("X=1\nfor i in 1 2; do\n  if true; then :; fi\n", "syntax error"),
                 std::vector<std::string>{"line 2: a syntax error (unexpected end of the text: no done closes the loop opened "
                                          "at line 2), at which bash stops reading the script, so it runs nothing from line 2 "
                                          "on (bash -n shows it); the import reads on past it"});
        QCOMPARE(warningsWith("X=1\nfi\ntorchrun a.py\n", "syntax error"),
                 std::vector<std::string>{"line 2: a syntax error (unexpected fi), at which bash stops reading the script, so it "
                                          "runs nothing from line 2 on (bash -n shows it); the import reads on past it"});
        QCOMPARE(readerLaunches("X=1\nfi\ntorchrun a.py\n"), std::string("<a.py>\n"));
        // Bash parses a line before it runs any of it: here line 2 opens a group that line 4
        // closes before the stray fi, so nothing from line 2 on runs.
        QCOMPARE(warningsWith("X=1\nexport A=1 && {\n  echo b\n}; fi\ntorchrun a.py\n", "syntax error"),
                 std::vector<std::string>{"line 4: a syntax error (unexpected fi), at which bash stops reading the script, so it "
                                          "runs nothing from line 2 on (bash -n shows it); the import reads on past it"});
        // Whole scripts bash -n takes are not said to have one: functions, case, loops read
        // from a file, groups and subshells, time and coproc before compound commands, and
        // a for loop (also the arithmetic one) with a { } group for its body.
        for (const char* whole : {"f() {\n  torchrun x.py\n}\nf\n", "case $X in\n  a) Y=1 ;;\n  *) Y=2 ;;\nesac\n",
                                  "while read -r l; do :; done < f\n{ echo; } > /dev/null\n( cd x && torchrun y.py )\n",
                                  "time { torchrun a.py; }\ntime -p for i in 1; do :; done\ntime while false; do :; done\n",
                                  "coproc NAME { cat; }\ncoproc while false; do :; done\n",
                                  "for x in a; { echo $x; }\nfor ((i = 0; i < 2; i++)); do echo $i; done\n",
                                  "for ((i = 0; i < 2; i++)) { echo $i; }\nfor ((i = 0; i < 2; i++)); { if :; then :; fi; }\n"})
            QVERIFY2(warningsWith(whole, "syntax error").empty(), whole);
        QCOMPARE(readerLaunches("bash -c 'time { torchrun a.py; }'\n"), std::string("<a.py>\n"));
        // The arithmetic for's header is one word, as bash reads it: its body, a { } group or
        // do ... done, is read once, where it is written.
        QCOMPARE(readerLaunches("for ((i = 0; i < 1; i++)) { torchrun a.py; }\n"), std::string("<a.py>\n"));
        QCOMPARE(readerLaunches("for ((i = 0; i < 1; i++)); do torchrun b.py; done\n"), std::string("<b.py>\n"));
        // The loop ends at its group's "}": an exit after it stops the script there.
        for (const char* loop : {"for ((i = 0; i < 1; i++)) { :; }\n", "for x in a; { :; }\n", "for ((;;)); do :; done\n"})
            QCOMPARE(readerLaunches(std::string(loop) + "exit 0\ntorchrun c.py\n"), std::string());
        QVERIFY(warningsWith("time -p for ((i = 0; i < 2; i++)) { :; }\n", "syntax error").empty());
        // Without a launch command, the error says where bash stops.
        try {
            importMegatronScript("X=1\nfi\n", "stray.sh");
            QFAIL("a script without a launch command must be refused");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("; the script has a syntax error at line 2 (unexpected fi), where bash stops "
                                                "reading it, and the reading past it found none")
                         != std::string::npos,
                     e.what());
        }
        // A stray fi or else (bash refuses the script) closes or flips no block around the
        // subshell or the call it is in.
        for (const std::string body : {"( fi; else )", "f() { fi; else true; }; f"})
            QCOMPARE(readerLaunches("if [ -z \"$U\" ]; then\n  " + body + "\n  torchrun yes.py\nelse\n  torchrun no.py\nfi\n"),
                     std::string("<yes.py>\n"));
        std::string nested = "torchrun deep.py";
        for (int k = 0; k < 100; ++k)
            nested = "( " + nested + " )";
        BashReader deep("deep.sh");
        deep.read(nested + "\ntorchrun after.py\n");
        QCOMPARE(deep.commands().size(), std::size_t(1));
        QVERIFY(std::any_of(deep.warnings().begin(), deep.warnings().end(), [](const std::string& w) {
            return w == "line 1: subshells nested 64 deep, far past any launch script; the commands of this one are not read";
        }));
        BashReader recursion("rec.sh");
        recursion.read("r() ( torchrun r.py; r )\nr\n");
        QCOMPARE(recursion.commands().size(), std::size_t(64));
    }

    void encoderSeqLengthIsTheSequenceLength()
    {
        // Megatron-LM's validate_args: without --seq-length, seq_length = encoder_seq_length;
        // with it, encoder_seq_length must be None (an assert), whatever the two values.
        const std::string head = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
                                 "--num-attention-heads 16 --micro-batch-size 1 --bf16 --vocab-size 32000 ";
        const ImportedScript alone = importMegatronScript(head + "--encoder-seq-length 2048\n", "enc.sh");
        QCOMPARE(alone.model.seq_length, 2048);
        QCOMPARE(alone.model.max_position_embeddings, 2048);
        QVERIFY(hasWarning(alone, "line 1: the launch command has no --max-position-embeddings (Megatron-LM requires it); "
                                  "--encoder-seq-length 2048 is assumed"));
        QVERIFY(!hasWarning(alone, "the sequence length is unknown"));
        QVERIFY(!hasWarning(alone, "unknown flag"));
        QVERIFY(!findFlag(alone, "--encoder-seq-length"));   // read into the model; an export writes --seq-length
        QCOMPARE(refusalOf(head + "--encoder-seq-length 2048 --max-position-embeddings 2048\n", "enc.sh"), std::string("accepted"));
        // A bad value names the flag given.
        QCOMPARE(refusalOf(head + "--encoder-seq-length 0 --max-position-embeddings 2048\n", "zero.sh"),
                 std::string("zero.sh: --encoder-seq-length: line 1: expected an integer from 1 to 100000000, got \"0\""));
        // Both: Megatron-LM stops, also when they agree; when they disagree --seq-length's is read.
        const ImportedScript both = importMegatronScript(head + "--seq-length 1024 --encoder-seq-length 2048 --max-position-embeddings 2048\n", "both.sh");
        QCOMPARE(both.model.seq_length, 1024);
        QVERIFY(hasWarning(both, "line 1: --encoder-seq-length: 2048 disagrees with --seq-length 1024, and Megatron-LM stops on "
                                 "the two together (validate_args asserts encoder_seq_length is None when --seq-length is given); "
                                 "the model takes --seq-length's 1024"));
        QCOMPARE(refusalOf(head + "--seq-length 2048 --encoder-seq-length 2048 --max-position-embeddings 2048\n", "same.sh"),
                 std::string("same.sh: --encoder-seq-length: given with --seq-length (both 2048): Megatron-LM stops on the two together "
                             "(validate_args asserts encoder_seq_length is None when --seq-length is given); give one of them"));
        // Neither: --seq-length is the one missing.
        QCOMPARE(refusalOf(head + "--max-position-embeddings 2048\n", "none.sh"),
                 std::string("none.sh: --seq-length: missing: Megatron-LM needs it (a positive integer) and the launch command read "
                             "(line 1: torchrun pretrain_gpt.py) does not give it"));
    }

    void arraySlicesTakeElements()
    {
        // ${A[@]:offset:length} takes elements (manual 3.5.3), a negative offset from the end;
        // compared word for word with bash.
        const std::string pre = "MORE=(--x --tensor-model-parallel-size 2 --sequence-parallel)\nS=abcdef";
        for (const std::string words : {"\"${MORE[@]:1}\"", "${MORE[@]:1:2}", "\"${MORE[@]: -1}\"", "\"${MORE[@]:(-2):1}\"",
                                        "\"${MORE[@]:9}\"", "\"${MORE[*]:1:2}\"", "${S:1:-1}", "${S: -2}", "\"${S:9}\""}) {
            QCOMPARE(readerPrints(pre, words), bashPrints(pre, words));
        }
        QCOMPARE(readerPrints(pre, "\"${MORE[@]:1}\""), std::string("<--tensor-model-parallel-size><2><--sequence-parallel><END>"));
        // An empty element is a word of its own in "${A[@]}", the first one too.
        QCOMPARE(readerPrints("E=('' x '')", "\"${E[@]}\""), bashPrints("E=('' x '')", "\"${E[@]}\""));
        QCOMPARE(readerPrints("E=('' x '')", "\"${E[@]}\""), std::string("<><x><><END>"));
        const ImportedScript s = importMegatronScript(
            pre + "\ntorchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 2 \"${MORE[@]:1}\"\n", "b2.sh");
        QCOMPARE(s.parallel.tp, 2);
        QVERIFY(s.parallel.sequence_parallel);
        QVERIFY(!findFlag(s, "--x"));
    }

    void srunSpellings()
    {
        // srun(1): -N/--nodes nodes, --ntasks-per-node processes per node, -n/--ntasks processes
        // in all; attached (-N2) and --opt=value forms.
        const std::string tail = " python pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 2\n";
        for (const std::string opts : {"-N2 --ntasks-per-node=8", "-N2 -n16", "--nodes=2 --ntasks=16", "-N 2 -n 16",
                                       "--nodes 2 --ntasks-per-node 8"}) {
            const ImportedScript s = importMegatronScript("srun " + opts + tail, "slurm.sh");
            QVERIFY2(s.nnodes == 2 && s.nproc_per_node == 8 && s.world_size == 16, opts.c_str());
        }
        const ImportedScript uneven = importMegatronScript("srun -N2 -n15" + tail, "uneven.sh");
        QCOMPARE(uneven.nproc_per_node, 8);
        QVERIFY(hasWarning(uneven, "srun -n 15 over 2 nodes is not the same number of processes on every node"));
    }

    void launchCommandIsTheTrainingOne()
    {
        // A preprocessing step (python X.py) before the torchrun launch is not the launch.
        const std::string train = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
                                  "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 1\n";
        const ImportedScript s = importMegatronScript(
            "python tools/preprocess_data.py --input data.json --output-prefix gpt --workers 8\nPREC=bf16\n" + train, "pre.sh");
        QCOMPARE(s.launcher, std::string("torchrun"));
        QCOMPARE(s.entry_script, std::string("pretrain_gpt.py"));
        QCOMPARE(s.command_line, 3);
        QCOMPARE(s.model.num_layers, 8);
        QVERIFY(hasWarning(s, "line 1: python tools/preprocess_data.py is not read as the launch command: the torchrun command of line 3 is"));
        // A script with no other: the error names the line read as the launch command.
        QCOMPARE(refusalOf("echo start\npython tools/preprocess_data.py --input data.json\n", "only.sh"),
                 std::string("only.sh: --num-layers: missing: Megatron-LM needs it (a positive integer) and the launch command read "
                             "(line 2: python tools/preprocess_data.py) does not give it"));
    }

    void requiredFlagsAndExpertRules()
    {
        // Megatron-LM requires --max-position-embeddings and --micro-batch-size (reference
        // section 2, "Required"): without them the import says what it assumed.
        const std::string head = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
                                 "--num-attention-heads 16 --seq-length 2048 --bf16 --vocab-size 32000 ";
        const ImportedScript bare = importMegatronScript(head + "\n", "req.sh");
        QVERIFY(hasWarning(bare, "line 1: the launch command has no --max-position-embeddings (Megatron-LM requires it); "
                                 "--seq-length 2048 is assumed"));
        QVERIFY(hasWarning(bare, "line 1: the launch command has no --micro-batch-size (Megatron-LM requires it); 1 is assumed"));
        const ImportedScript full = importMegatronScript(head + "--max-position-embeddings 4096 --micro-batch-size 2\n", "full.sh");
        QVERIFY(!hasWarning(full, "Megatron-LM requires it"));
        // EP > 1 needs experts, and they split evenly over EP (validate_args asserts both).
        QCOMPARE(refusalOf(head + "--expert-model-parallel-size 2\n", "dense.sh"),
                 std::string("dense.sh: --expert-model-parallel-size: EP 2 without --num-experts: expert parallelism needs an MoE "
                             "model (Megatron-LM asserts num_experts is set when EP > 1)"));
        QCOMPARE(refusalOf(head + "--disable-bias-linear --num-experts 6 --expert-model-parallel-size 4\n", "ne.sh"),
                 std::string("ne.sh: --expert-model-parallel-size: EP 4 does not divide the 6 experts of --num-experts "
                             "(Megatron-LM asserts num_experts % EP == 0)"));
        QCOMPARE(refusalOf(head + "--disable-bias-linear --num-experts 8 --expert-model-parallel-size 4\n", "ok.sh"),
                 std::string("accepted"));
    }
    void exitReviewRegressions()
    {
        // &> and &>> redirect stdout and stderr: no "&" that runs the command in the background
        // (which made the exit after || always run, and lost what a function sets).
        const std::vector<std::string> redirects = {
            "command -v torchrun &> /dev/null || { echo \"torchrun not found\"; exit 1; }\ntorchrun a.py\n",
            "setup() {\n  TP=4\n  export PP=2\n}\nsetup &> /dev/null\ntorchrun a.py $TP $PP\n",
            "TP=2\nload_config() { TP=4; }\nload_config &>>/dev/null\ntorchrun a.py $TP\n",
        };
        for (const std::string& script : redirects) {
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
            QVERIFY2(!readerLaunches(script).empty(), script.c_str());
        }
        // The pattern after =~ in [[ ]] is one word: its ( | ) neither open nor close a subshell,
        // so a subshell function's body ends at its own ")" and a subshell keeps TP to itself.
        const std::vector<std::string> regexes = {
            "MODEL=llama\nTP=2\ndebug() (\n  if [[ $MODEL =~ ^(llama|mixtral)$ ]]; then TP=1; fi\n  torchrun debug.py $TP\n)\n"
            "launch() {\n  torchrun a.py $TP\n}\nlaunch\n",
            "MODEL=llama\nTP=2\n(\n  [[ $MODEL =~ ^(llama|mixtral)$ ]] && TP=4\n  cd /\n)\ntorchrun a.py $TP\n",
            "X=\"a b\"\nif [[ $X =~ (a b) ]]; then :; fi\nTP=3\ntorchrun a.py $TP\n",
        };
        for (const std::string& script : regexes) {
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
            QVERIFY2(!readerLaunches(script).empty(), script.c_str());
        }
        // An exit in a function called after && / || whose status the text does not give is
        // undecided, as the inline { ...; exit 1; } is: read as not taken, named at the call.
        const std::string die = "die() { echo \"$*\" >&2; exit 1; }\n";
        const std::vector<std::string> dies = {
            die + "WORK=/tmp\ncd \"$WORK\" || die \"cannot cd to $WORK\"\n[ -d / ] || die \"no root\"\n"
                  "command -v torchrun >/dev/null 2>&1 || die \"torchrun not found\"\ntorchrun a.py\n",
            die + "check() { [ -d \"$1\" ] || die \"missing $1\"; }\ncheck /tmp\nif ! mkdir -p out; then die \"mkdir\"; fi\n"
                  "torchrun a.py\n",
            die + "MODE=train\ncase $MODE in train|eval) ;; *) die \"bad mode\";; esac\ntorchrun a.py\n",
            die + "mkdir -p out || die \"cannot create the output directory\"\ntorchrun a.py\n",
        };
        for (const std::string& script : dies) {
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
            QVERIFY2(!readerLaunches(script).empty(), script.c_str());
        }
        QCOMPARE(warningsWith(dies[3], "exit"),
                 std::vector<std::string>{"line 2: exit 1 (line 1, in function die) depends on the exit status of `mkdir -p out`: "
                                          "read as not taken"});
        // A function that exits where the call surely runs ends the reading at the call's line.
        const std::string usage = "usage() {\n  echo usage >&2\n  exit 1\n}\nX=1\nusage\ntorchrun a.py\n";
        QCOMPARE(bashLaunches(usage), std::string());
        BashReader u("usage.sh");
        u.read(usage);
        QCOMPARE(u.exitLine(), 6);
        QCOMPARE(readerLaunches(usage), std::string());
        // An exit in a loop body is undecided: the text does not tell whether the body runs.
        const std::vector<std::string> loops = {
            "while [ -f /hapmoe-no-such-file ]; do echo never; exit 1; done\ntorchrun a.py\n",
            "for x in $EXTRA_ARGS; do echo \"bad $x\"; exit 1; done\ntorchrun a.py\n",
            "until [ -d / ]; do exit 1; done\ntorchrun a.py\n",
        };
        for (const std::string& script : loops) {
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
            QVERIFY2(readerWarns(script, "is inside a loop body, which the text does not tell runs"), script.c_str());
        }
        // The usual option loop, without the script's arguments: no turn, as bash runs it bare,
        // with a warning; what the body sets (TP) depends on the arguments.
        const std::string optionLoop = "TP=2\nparse_args() {\n  while [[ $# -gt 0 ]]; do\n    case \"$1\" in\n"
                                       "      --tp) TP=\"$2\"; shift 2 ;;\n      *) echo \"unknown option $1\"; exit 1 ;;\n"
                                       "    esac\n  done\n}\nparse_args \"$@\"\ntorchrun a.py $TP\n";
        QCOMPARE(readerLaunches(optionLoop), bashLaunches(optionLoop));
        QCOMPARE(warningsWith(optionLoop, "loop"),
                 std::vector<std::string>{"line 3: the loop's condition depends on $#, from the script's own arguments, and fails "
                                          "as read, so its body is not read (give the script's arguments or environment to read it "
                                          "as it runs)"});
        ScriptInputs inputs;
        inputs.arguments = {"--tp", "8"};
        QCOMPARE(readerLaunchesWith(optionLoop, inputs), std::string("<a.py><8>\n"));
        QCOMPARE(bashLaunchesWith(optionLoop, inputs), std::string("<a.py><8>\n"));
        // A loop the text decides runs as bash runs it: none here, and no warning.
        for (const std::string& decided : {std::string("N=0\nwhile [ $N -gt 0 ]; do echo never; exit 1; done\ntorchrun a.py\n"),
                                           std::string("N=1\nuntil [ $N -gt 0 ]; do exit 1; done\ntorchrun a.py\n")}) {
            QCOMPARE(readerLaunches(decided), bashLaunches(decided));
            QVERIFY2(!readerWarns(decided, "loop"), decided.c_str());
        }
        // A for loop over words the text gives runs its body once per word, none for none.
        const std::string emptyFor = "EXTRA=()\nfor x in \"${EXTRA[@]}\"; do echo \"bad $x\"; exit 1; done\ntorchrun a.py\n";
        QCOMPARE(readerLaunches(emptyFor), bashLaunches(emptyFor));
        QVERIFY(!readerWarns(emptyFor, "loop"));
        // Names read in arithmetic depend on the environment as $NAME does: a guard on them is
        // one bash run bare takes (no launch) and the reader reads as not taken.
        const std::vector<std::string> arith = {
            "NNODES=${NNODES:-1}\nif [ $((NNODES * 8)) -lt 16 ]; then echo \"need 2 nodes\"; exit 1; fi\ntorchrun a.py\n",
            "GPUS_PER_NODE=8\nNNODES=${NNODES:-1}\nWORLD_SIZE=$((GPUS_PER_NODE * NNODES))\nTP=4; PP=4\n"
            "if [ $WORLD_SIZE -lt $((TP * PP)) ]; then echo small; exit 1; fi\ntorchrun a.py\n",
        };
        for (const std::string& script : arith) {
            QVERIFY2(bashLaunches(script).find("<a.py>") == std::string::npos, script.c_str());
            QCOMPARE(readerLaunches(script), std::string("<a.py>\n"));
            QVERIFY2(readerWarns(script, "exit 1 depends on NNODES, which the script takes from its environment where it is set"),
                     script.c_str());
        }
        // What a subshell sets or unsets leaves what the script's variables depend on alone.
        const std::vector<std::string> subshells = {
            "NNODES=${NNODES:-1}\n( NNODES=1; echo \"smoke test on $NNODES node\" )\n"
            "if [ \"$NNODES\" -lt 2 ]; then echo \"needs 2 nodes\"; exit 1; fi\ntorchrun a.py\n",
            "( unset DATA_PATH; echo \"check without data\" )\n[ -z \"$DATA_PATH\" ] && { echo \"set DATA_PATH\"; exit 1; }\n"
            "torchrun a.py\n",
        };
        for (const std::string& script : subshells) {
            QVERIFY2(bashLaunches(script).find("<a.py>") == std::string::npos, script.c_str());
            QCOMPARE(readerLaunches(script), std::string("<a.py>\n"));
            QVERIFY2(readerWarns(script, "read as not taken"), script.c_str());
        }
        // Guards sharing a usage function are each listed, by the line of their call.
        const std::string shared = "usage() { echo usage; exit 1; }\n[ -z \"$A\" ] && usage\n[ -z \"$B\" ] && usage\n"
                                   "[ $# -lt 1 ] && usage\ntorchrun a.py\n";
        QCOMPARE(readerLaunches(shared), std::string("<a.py>\n"));
        QCOMPARE(warningsWith(shared, "exit 1"),
                 std::vector<std::string>{"line 2: exit 1 (line 1, in function usage) depends on A, which the script does not set "
                                          "(its environment); line 3: exit 1 (line 1, in function usage) depends on B, which the "
                                          "script does not set (its environment); line 4: exit 1 (line 1, in function usage) "
                                          "depends on $#, from the script's own arguments: each read as not taken"});
    }

    void failureExitsAndArithmeticTests()
    {
        // An exit on a command's failure (cd "$DIR" || exit 1) depends on the machine the
        // script runs on, as a guard on its environment does: read as not taken and listed with
        // the guards in one warning, where each such line had a warning of its own.
        const std::string launch = "torchrun a.py\n";
        const std::string failures = "cd \"$MEGATRON_HOME\" || exit 1\nmkdir -p /ckpt || { echo \"cannot create\"; exit 2; }\n"
                                     "if ! pushd /work >/dev/null; then\n  exit 3\nfi\n" + launch;
        QCOMPARE(readerLaunches(failures), std::string("<a.py>\n"));
        QCOMPARE(warningsWith(failures, "exit"),
                 std::vector<std::string>{"line 1: exit 1 depends on the exit status of `cd \"$MEGATRON_HOME\"`; line 2: exit 2 "
                                          "depends on the exit status of `mkdir -p /ckpt`; line 4: exit 3 depends on the exit "
                                          "status of `pushd /work`: each read as not taken"});
        // A test's status still decides where the text gives it, as in bash.
        QVERIFY(warningsWith("MODE=train\n[ \"$MODE\" = train ] || exit 1\n" + launch, "exit").empty());
        QCOMPARE(readerLaunches("MODE=train\n[ \"$MODE\" = train ] || exit 1\n" + launch), std::string("<a.py>\n"));

        // An arithmetic command that only tests, (( N > 1 )), is evaluated as bash does (status
        // 0 when the expression is nonzero, manual 3.2.6), with no "not evaluated" warning;
        // one that assigns is still not evaluated, and says so.
        const std::vector<std::string> decided = {
            "NNODES=1\n(( NNODES < 2 )) && exit 0\ntorchrun a.py\n",
            "GPUS=8\nif (( GPUS >= 8 )); then TP=8; else TP=4; fi\ntorchrun a.py $TP\n",
            "N=3\n(( N > 2 )) || exit 1\ntorchrun a.py $N\n",
            "if ! (( 2 * 3 == 6 )); then exit 1; fi\ntorchrun a.py\n",
            "A=4; B=2\nif (( A % B != 0 )) || (( A <= B )); then TP=1; else TP=$((A / B)); fi\ntorchrun a.py $TP\n",
        };
        for (const std::string& script : decided) {
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
            QVERIFY2(!readerWarns(script, "is not evaluated"), script.c_str());
            QVERIFY2(!readerWarns(script, "cannot be decided"), script.c_str());
        }
        QCOMPARE(readerLaunches(decided[1]), std::string("<a.py><8>\n"));
        QCOMPARE(readerLaunches(decided[4]), std::string("<a.py><2>\n"));
        for (const char* assigns : {"I=1\n(( I++ ))\ntorchrun a.py $I\n", "I=1\n(( I += 2 ))\ntorchrun a.py $I\n",
                                    "I=1\n(( I <<= 2 ))\ntorchrun a.py $I\n"}) {
            QCOMPARE(readerLaunches(assigns), bashLaunches(assigns));
            QVERIFY(!readerWarns(assigns, "is not evaluated"));
        }
        // `return` outside a function fails in a script bash runs ("can only `return' from a
        // function or sourced script"), and the script goes on: the idiom `return || exit 0`
        // of a file meant to be sourced exits.
        for (const std::string& script : {"return 2>/dev/null || exit 0\n" + launch, "return\n" + launch,
                                          "f() { return 0 || exit 1; }\nf\n" + launch})
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
        QCOMPARE(readerLaunches("return\n" + launch), std::string("<a.py>\n"));
        // On a variable the script does not set: a guard, listed as the [ ] guards are.
        const std::string env = "(( NNODES < 2 )) && exit 1\n" + launch;
        QVERIFY(bashLaunches(env).empty());
        QCOMPARE(readerLaunches(env), std::string("<a.py>\n"));
        QCOMPARE(warningsWith(env, "exit"),
                 std::vector<std::string>{"line 1: exit 1 depends on NNODES, which the script does not set (its environment): "
                                          "read as not taken"});
    }

    void caseInsideCommandSubstitution()
    {
        // A case block inside $( ) ends each pattern list with ")": the substitution ends at the
        // ")" after esac, as bash parses it, and the words after it stay words of their own.
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"M=a\ntorchrun a.py $(case $M in a) echo 1;; *) echo 2;; esac) next\n",
             "<a.py><$(case $M in a) echo 1;; *) echo 2;; esac)><next>\n"},
            {"M=a\nX=\"$(case \"$M\" in (a|b) echo 4 ;& c) echo 5 ;; esac) tail\"\ntorchrun a.py \"$X\" next\n",
             "<a.py><$(case \"$M\" in (a|b) echo 4 ;& c) echo 5 ;; esac) tail><next>\n"},
            {"torchrun a.py $(f() { case $1 in x) echo y;; esac; }; f x) next\n",
             "<a.py><$(f() { case $1 in x) echo y;; esac; }; f x)><next>\n"},
            // A substitution inside a longer value stays one word when the value is split.
            {"M=$(echo 10.0.0.1 | cut -d' ' -f1)\nARGS=\"--master_addr $M --nnodes 4\"\ntorchrun $ARGS a.py\n",
             "<--master_addr><$(echo 10.0.0.1 | cut -d' ' -f1)><--nnodes><4><a.py>\n"},
            // "case" and "esac" as parts of other words, or quoted, change nothing.
            {"torchrun a.py $(echo showcase) \"$(echo 'case in)')\" next\n",
             "<a.py><$(echo showcase)><$(echo 'case in)')><next>\n"},
        };
        for (const auto& [script, words] : cases) {
            QCOMPARE(readerLaunches(script), words);
            // Bash gives the same number of words: the substitution is one word (unquoted, its
            // output here is one word too).
            const std::string bash = bashLaunches(script);
            QVERIFY2(std::count(bash.begin(), bash.end(), '<') == std::count(words.begin(), words.end(), '<'),
                     (script + "bash: " + bash).c_str());
        }
    }

    void doubleParenthesisOpensSubshells()
    {
        // "((" whose two "(" close apart is two nested subshells, as bash reads it; one whose
        // "))" closes both is an arithmetic command, parentheses inside it included.
        const std::vector<std::string> scripts = {
            "TP=2\n((cd /tmp; TP=4; torchrun a.py $TP) )\ntorchrun b.py $TP\n",
            "TP=2\n( (TP=\"(4)\"; torchrun a.py \"$TP\") )\ntorchrun b.py $TP\n",
            "TP=2\n(( (1 + 2) * 3 > 8 )) && TP=8\ntorchrun a.py $TP\n",
            "TP=2\n(( 1 + ( 2 ) )) || TP=8\ntorchrun a.py $TP\n",
        };
        for (const std::string& script : scripts) {
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
            QVERIFY2(!readerLaunches(script).empty(), script.c_str());
        }
        QCOMPARE(readerLaunches(scripts[0]), std::string("<a.py><4>\n<b.py><2>\n"));
        QCOMPARE(readerLaunches(scripts[2]), std::string("<a.py><8>\n"));
    }

    void statusReadsFollowTheirSense()
    {
        // A command's status counts only where it decides what runs: a condition decided by
        // its tests leaves the exits under it as bash runs them.
        const std::vector<std::string> decided = {
            "SKIP=1\nif [ \"$SKIP\" = 1 ] || ! command -v torchrun; then echo skip >&2; exit 0; fi\ntorchrun a.py\n",
            "if mkdir -p /tmp/hapmoe-status-test && [ 1 = 2 ]; then TP=2; else exit 1; fi\ntorchrun a.py\n",
            "if false; then :; else exit 1; fi\ntorchrun a.py\n",
            "FLAG=false\nTP=2\nif $FLAG; then TP=8; fi\ntorchrun a.py $TP\n",
            "TP=2\n(( 5--3 )) && TP=8\ntorchrun a.py $TP\n",
            "TP=2\nif ((TP>1))then TP=8; fi\ntorchrun a.py $TP\n",
            "N=1; M=1; TP=2\n(( (N * (M+1)) > 4 )) && TP=8\ntorchrun a.py $TP\n",
            "N=2; TP=4\n(( $((N*2)) > 9 )) && TP=8\ntorchrun a.py $TP\n",
            "need() { command -v \"$1\" >/dev/null && return 0; echo missing; exit 1; }\nneed ls\ntorchrun a.py\n",
        };
        for (const std::string& script : decided) {
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
            QVERIFY2(!readerWarns(script, "is not evaluated"), script.c_str());
        }
        QCOMPARE(readerLaunches(decided[5]), std::string("<a.py><8>\n"));
        // With DATA_PATH set, bash takes the then branch (NNODES decides it) and the launch with
        // TP 8; the guard depends on DATA_PATH alone, not on the command never run.
        const std::string shortCircuit = "NNODES=1\nTP=2\nif [ \"$NNODES\" -eq 1 ] || ! command -v srun >/dev/null; then\n"
                                         "  TP=8\n  [ -z \"$DATA_PATH\" ] && { echo \"set DATA_PATH\"; exit 1; }\nelse\n  TP=2\nfi\n"
                                         "torchrun a.py $TP\n";
        QCOMPARE(bashLaunches("DATA_PATH=/data\n" + shortCircuit), std::string("<a.py><8>\n"));
        QCOMPARE(readerLaunches(shortCircuit), std::string("<a.py><8>\n"));
        QCOMPARE(warningsWith(shortCircuit, "exit"),
                 std::vector<std::string>{"line 5: exit 1 depends on DATA_PATH, which the script does not set (its environment): "
                                          "read as not taken"});
        // The rest of a function after a return on success runs only if the command failed:
        // its exit is a guard on that command.
        QCOMPARE(warningsWith(decided[8], "exit 1"),
                 std::vector<std::string>{"line 2: exit 1 (line 1, in function need) depends on the exit status of "
                                          "`command -v \"$1\"`: read as not taken"});
        // An exit that runs when a command succeeds is no guard the real run passes: undecided.
        for (const std::string& script : {std::string("cd /tmp && exit 1\ntorchrun a.py\n"),
                                          std::string("! cd /tmp || exit 1\ntorchrun a.py\n"),
                                          std::string("if command -v ls; then exit 0; fi\ntorchrun a.py\n")}) {
            QCOMPARE(readerLaunches(script), std::string("<a.py>\n"));
            QVERIFY2(readerWarns(script, "succeeds, which the text cannot decide; the rest of the script is read as if it did not exit"),
                     script.c_str());
            QVERIFY2(!readerWarns(script, "depends on the exit status"), script.c_str());
        }
        // Under else, the exit runs when the command fails; a long command is named by its
        // first words.
        QCOMPARE(warningsWith("if cd /tmp; then :; else exit 1; fi\ntorchrun b.py --one 1 --two 2 || { echo failed; exit 2; }\n",
                              "exit"),
                 std::vector<std::string>{"line 1: exit 1 depends on the exit status of `cd /tmp`; line 2: exit 2 depends on the "
                                          "exit status of `torchrun b.py --one ...`: each read as not taken"});
        // A case on the script's arguments names the variables its branches set, but not one
        // set only inside a subshell of a branch: there it never leaves the subshell.
        const std::string caseSubshell = "TP=2\ncase \"$1\" in\n  --tp) ( TP=8; echo $TP ) ;;\n  --pp) PP=4 ;;\nesac\n"
                                         "torchrun a.py $TP\n";
        QCOMPARE(readerLaunches(caseSubshell), std::string("<a.py><2>\n"));
        QCOMPARE(warningsWith(caseSubshell, "case"),
                 std::vector<std::string>{"line 2: case \"$1\": the subject is not known from the text, so every branch is read "
                                          "in order and PP keeps the value of the last branch that sets it"});
        // A second review: a return in a subshell ends the subshell only; a list whose
        // separators change leaves no one command's failure; a command before "|| true" or
        // "&& false" decides nothing; "case" as an argument inside $( ) is a word; a variable
        // set after an undecided && holds a guess, so a test on it decides no exit; return
        // outside a function fails in a condition too; return in a pipeline leaves the
        // function running.
        const std::vector<std::string> second = {
            "f() { ( command -v nvcc-hapmoe-test && return 0; echo sub >&2 ); echo after >&2; exit 1; }\nf\ntorchrun a.py\n",
            "command -v nvcc-hapmoe-test >/dev/null || true && exit 5\ntorchrun a.py\n",
            "SKIP=1\ncommand -v nvcc-hapmoe-test || [ \"$SKIP\" = 1 ] || exit 5\ntorchrun a.py\n",
            "MULTI=0\ncommand -v srun-hapmoe-test >/dev/null && MULTI=1\n"
            "if [ \"$MULTI\" = 1 ]; then echo sbatch >&2; exit 0; fi\ntorchrun a.py\n",
            "if ! return 0 2>/dev/null; then exit 0; fi\ntorchrun a.py\n",
            "f() { true && return 0 | cat; echo after >&2; exit 1; }\nf\ntorchrun a.py\n",
        };
        for (const std::string& script : second)
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
        QCOMPARE(warningsWith(second[3], "exit"),
                 std::vector<std::string>{"line 3: exit depends on MULTI (line 2), whose value the text cannot decide; the rest "
                                          "of the script is read as if it did not exit"});
        // A name the script does not set in (( )) is its environment's, which the real run sets:
        // undecided, so the branch is read (the multi-node arguments stay).
        const std::string nodes = "ARGS=(--nproc_per_node 8)\nif (( NNODES > 1 )); then ARGS+=(--nnodes $NNODES); fi\n"
                                  "torchrun \"${ARGS[@]}\" a.py\n";
        QCOMPARE(bashLaunches("NNODES=4\n" + nodes), std::string("<--nproc_per_node><8><--nnodes><4><a.py>\n"));
        QVERIFY(readerLaunches(nodes).find("<--nnodes>") != std::string::npos);
        // && and || inside [[ ]], -a and -o inside [ ], join tests of one command: no list
        // operators, so the command after them is no exit status to read.
        const std::vector<std::string> joined = {
            "SP=0; TP=2; EXTRA=none\nif [[ \"$SP\" == 1 && \"$TP\" -gt 1 ]]; then EXTRA=--sequence-parallel; fi\ntorchrun a.py $EXTRA\n",
            "SP=0; TP=2; EXTRA=none\nif [ \"$SP\" = 1 -a \"$TP\" -gt 1 ]; then EXTRA=--sequence-parallel; fi\ntorchrun a.py $EXTRA\n",
            "SP=1; TP=1\nif [[ \"$SP\" == 0 || \"$TP\" -gt 1 || ! -n \"$SP\" ]]; then TP=4; fi\ntorchrun a.py $TP\n",
            "A=b\nif [ \"$A\" = a -o \"$A\" = b ]; then TP=8; else TP=2; fi\ntorchrun a.py $TP\n",
            "M=0\n[[ \"$M\" == 1 && ! -d /nonexistent ]] && exit 1\ntorchrun a.py\n",
        };
        for (const std::string& script : joined) {
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
            QVERIFY2(!readerWarns(script, "exit status of"), script.c_str());
        }
        QCOMPARE(readerLaunches(joined[3]), std::string("<a.py><8>\n"));
        // The reading still follows the guess where no exit depends on it: the branch that
        // the guessed value selects, as if the assignment ran.
        QCOMPARE(readerLaunches("[ -f /etc/hapmoe-test-none ] && NODES=4\nif [ \"$NODES\" = 4 ]; then TP=8; else TP=2; fi\n"
                                "torchrun a.py $TP\n"),
                 std::string("<a.py><8>\n"));
        QCOMPARE(readerLaunches("W=$(echo case in point)\ntorchrun a.py \"$W\"\n"), std::string("<a.py><$(echo case in point)>\n"));
        // cmd1 || cmd2 && exit runs when either succeeds: undecided, not a guard.
        const std::string mixed = "command -v bash >/dev/null || command -v nvcc >/dev/null && exit 5\ntorchrun a.py\n";
        QCOMPARE(readerLaunches(mixed), std::string("<a.py>\n"));
        QCOMPARE(warningsWith(mixed, "exit"),
                 std::vector<std::string>{"line 1: exit depends on the exit status of `command -v bash` and `command -v nvcc`, "
                                          "which the text cannot decide; the rest of the script is read as if it did not exit"});
        // All joined by &&, failing: the else of `if a && b`, and `a && b || exit`, run only when
        // one of them failed, so they are guards the real run passes.
        QCOMPARE(warningsWith("if cd /tmp && mkdir -p /tmp/hapmoe-g; then :; else exit 1; fi\ncd /tmp && source e.sh || exit 2\n"
                              "torchrun a.py\n",
                              "exit"),
                 std::vector<std::string>{"line 1: exit 1 depends on the exit status of `cd /tmp` and `mkdir -p /tmp/hapmoe-g`; "
                                          "line 2: exit 2 depends on the exit status of `cd /tmp` and `source e.sh`: each read as "
                                          "not taken"});
        // The usual entry point of a script that may be sourced: bash runs it, so BASH_SOURCE[0]
        // is the script, as $0 is, and main runs.
        QCOMPARE(readerLaunches("main() { torchrun a.py \"$@\"; }\nif [[ \"${BASH_SOURCE[0]}\" == \"${0}\" ]]; then main; fi\n"),
                 std::string("<a.py>\n"));
        // while and until bodies are read once, and say so, as for bodies do.
        QVERIFY(readerWarns("while [ -f /hapmoe-no-such-file ]; do N=1; done\ntorchrun a.py\n",
                            "loops are read as straight-line code"));
    }

    void argumentsAndEnvironmentGiven()
    {
        // A script that picks its configuration by its first argument and by MODEL, as
        // `MODEL=big bash train.sh 70B --extra` runs it: bash and the reader agree.
        const std::string script = "TP=2\nif [ \"$1\" = 70B ]; then TP=8; fi\ncase \"$MODEL\" in big) PP=4 ;; *) PP=1 ;; esac\n"
                                   "shift\ntorchrun a.py $TP $PP \"$@\" $#\n";
        ScriptInputs inputs;
        inputs.arguments = {"70B", "--extra"};
        inputs.environment = {{"MODEL", "big"}};
        QCOMPARE(bashLaunchesWith(script, inputs), std::string("<a.py><8><4><--extra><1>\n"));
        QCOMPARE(readerLaunchesWith(script, inputs), bashLaunchesWith(script, inputs));
        inputs.arguments = {"7B"};
        inputs.environment.clear();
        QCOMPARE(readerLaunchesWith(script, inputs), bashLaunchesWith(script, inputs));   // <a.py><2><1><0>
        // A shift in a subshell leaves the script's arguments as they were.
        const std::string subshellShift = "( shift )\ntorchrun a.py \"$1\"\n";
        QCOMPARE(readerLaunchesWith(subshellShift, inputs), std::string("<a.py><7B>\n"));
        QCOMPARE(bashLaunchesWith(subshellShift, inputs), std::string("<a.py><7B>\n"));

        // Without them, the test reads $1 as empty, and says so; a case on MODEL reads every
        // branch, as before.
        const std::string byArgument = "TP=2\nif [ \"$1\" = 70B ]; then TP=8; fi\ntorchrun a.py $TP\n";
        QCOMPARE(readerLaunches(byArgument), std::string("<a.py><2>\n"));
        QCOMPARE(warningsWith(byArgument, "as read"),
                 std::vector<std::string>{"line 2: the test `[ \"$1\" = 70B ]` fails as read, with $1 empty: the script's "
                                          "arguments are not given (give the arguments to read the script as it runs)"});
        QCOMPARE(warningsWith("[[ \"$SIZE\" == big && \"$1\" != x ]] || TP=2\ntorchrun a.py\n", "as read"),
                 std::vector<std::string>{"line 1: the test `[[ \"$SIZE\" == big && \"$1\" != x ]]` fails as read, with SIZE "
                                          "and $1 empty: the script's arguments are not given, and neither the script nor its "
                                          "given environment sets SIZE (give both to read the script as it runs)"});
        // A usage check and a default (-z) are not choices of a configuration: no warning.
        QVERIFY(!readerWarns("if [ \"$1\" = --help ]; then echo usage; exit 0; fi\n[ -z \"$NNODES\" ] && NNODES=1\n"
                             "torchrun a.py\n",
                             "as read"));

        // The importer passes them on and keeps them.
        const std::string launch = "if [ \"$1\" = 70B ]; then L=80; else L=32; fi\ntorchrun --nproc_per_node 8 pretrain_gpt.py "
                                   "--num-layers $L --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
                                   "--max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 64 --bf16\n";
        inputs = {};
        inputs.arguments = {"70B"};
        const ImportedScript big = importMegatronScript(launch, "train.sh", inputs);
        QCOMPARE(big.model.num_layers, 80);
        QVERIFY(big.inputs == inputs);
        QCOMPARE(importMegatronScript(launch, "train.sh").model.num_layers, 32);
    }

    void forLoopsOverKnownWords()
    {
        // The body once per word, nested loops included, and the name keeps the last word, as
        // in bash (manual 3.2.5.1).
        const std::vector<std::string> exact = {
            "DATA=\"\"\nfor f in a b 'c d'; do\n  DATA=\"$DATA 1.0 /data/$f\"\n  for g in x y; do N=$((${N:-0} + 1)); done\ndone\n"
            "torchrun a.py $DATA $N $f\n",
            "for MODEL in moe_1p3B; do\n  if [ \"$MODEL\" = moe_1p3B ]; then TP=4; else echo unknown; exit 1; fi\ndone\n"
            "torchrun a.py $TP\n",
            "SIZES=(7B 70B)\nfor s in \"${SIZES[@]}\"; do\n  case $s in 70B) TP=8 ;; *) TP=2 ;; esac\n  torchrun a.py $s $TP\ndone\n",
            "run() { for a; do torchrun a.py \"$a\"; done; }\nrun one two\n",
            "for x in a b; do\n  for y in c; do torchrun a.py $x$y; done\ndone\n",
            "for f in a b; do TP=4; break; done\ntorchrun a.py $TP $f\n",
            "for x in a b c; do\n  for y in 1 2; do [ $y = 2 ] && continue 2; torchrun a.py $x$y; done\n  echo never\ndone\n",
            "N=2\nwhile (( N < 8 )); do N=$((N * 2)); done\ntorchrun a.py $N\n",
            "i=0\nuntil [ $i -ge 3 ]; do ((i++)); [ $i = 2 ] && continue; torchrun a.py $i; done\n",
            "while true; do TP=8; break; done\ntorchrun a.py $TP\n",
        };
        for (const std::string& script : exact) {
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
            QVERIFY2(!readerWarns(script, "loops are read"), script.c_str());
        }
        QCOMPARE(readerLaunches(exact[2]), std::string("<a.py><7B><2>\n<a.py><70B><8>\n"));
        // With the script's arguments given, `for a` and `for a in "$@"` run over them.
        ScriptInputs inputs;
        inputs.arguments = {"--tp", "8"};
        const std::string overArgs = "ARGS=\"\"\nfor a in \"$@\"; do ARGS=\"$ARGS <$a>\"; done\ntorchrun a.py $ARGS\n";
        QCOMPARE(readerLaunchesWith(overArgs, inputs), bashLaunchesWith(overArgs, inputs));
        // Still read once, with the warning: words the text does not give, file patterns, a
        // loop whose done is joined by && (a piped one is read as a subshell:
        // loopsInTheirOwnProcess).
        for (const std::string& once : {std::string("for f in $(ls); do TP=4; done\ntorchrun a.py\n"),
                                        std::string("for f in *.json; do TP=4; done\ntorchrun a.py\n"),
                                        std::string("for f in a b; do echo $f; done && echo ok\ntorchrun a.py\n")})
            QVERIFY2(readerWarns(once, "loops are read as straight-line code"), once.c_str());
    }

    void arithmeticCommandsAssign()
    {
        // (( )) and let make their assignments (manual 6.5): counters in loops, compound
        // assignments, comma lists; bash and the reader agree.
        const std::vector<std::string> scripts = {
            "i=0\nfor f in a b c; do A[$i]=$f; ((i++)); done\nlet \"N = 2 * 3\" M=N+1\nX=1\n(( X += 5, Y = X * 2 ))\n"
            "(( X <<= 2 ))\nlet X%=7\ntorchrun a.py \"${A[@]}\" $i $N $M $X $Y\n",
            "N=4\n(( --N ))\n(( N-- ))\n((N*=10))\ntorchrun a.py $N\n",
            // Their status: 0 when the last value is not zero (i++ gives the old value).
            "TP=1\nlet \"TP = 2\" || TP=8\ni=1\nlet i++ || TP=3\nlet x=0 && TP=4\nj=0\n(( j++ )) && TP=5\n(( j++ )) && PP=2\n"
            "torchrun a.py $TP $PP $i $j\n",
            // The conditional operator (Pai-Megatron-Patch: $(( ($TP > 1) ? 1 : 0 ))), nested
            // to the right as in C.
            "TP=2\nSP=$(( ($TP > 1) ? 1 : 0 ))\nA=$(( TP == 1 ? 10 : TP > 1 ? 20 : 30 ))\nB=$(( (0 ? 3 : 4) + 1 ))\n"
            "torchrun a.py $SP $A $B\n",
            // Shifts and bitwise operators, in compound assignments too, wrapping at 64 bits.
            "X=-5\n(( X <<= 62 ))\nY=3\n(( Y >>= 1, Z = 1 << 65 ))\nM=$(( ~5 & 0xff ^ 3 | 1 << 4 ))\n"
            "K=9223372036854775807\n(( K++ ))\nlet 'W = 1 == 2 > 1'\ntorchrun a.py $X $Y $Z $M $K $W\n",
        };
        for (const std::string& script : scripts) {
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
            QVERIFY2(!readerWarns(script, "is not evaluated"), script.c_str());
        }
        QCOMPARE(readerLaunches(scripts[0]), std::string("<a.py><a><b><c><3><6><7><3><12>\n"));
        QCOMPARE(readerLaunches(scripts[3]), std::string("<a.py><1><20><5>\n"));
        // A name the script does not set (its environment's) or an assignment inside an
        // expression is not evaluated: the variables keep their values, with the warning.
        for (const std::string& script : {std::string("(( COUNT++ ))\ntorchrun a.py\n"), std::string("j=1\n(( i = j++ ))\ntorchrun a.py\n")})
            QVERIFY2(readerWarns(script, "(( )) is not evaluated; variables it sets keep their earlier values"), script.c_str());
    }

    void integerAttributeMakesAssignmentsArithmetic()
    {
        // declare / typeset / local -i (manual 4.2): every assignment to the name is an
        // arithmetic expression, and += adds; +i and unset take the attribute away. Without it
        // += appends text (10 then 102). bash and the reader agree.
        const std::vector<std::string> scripts = {
            "declare -i L=10\nL+=2\nM=10\nM+=2\ntorchrun a.py $L $M\n",
            "declare -i L\nL=3+5\nL+=2*2\ntypeset -i N=6*2\ndeclare +i N\nN+=1\ntorchrun a.py $L $N\n",
            "f() { local -i K=2*3; K+=1; echo $K; }\ntypeset -i P=4\nunset P\nP=5\nP+=1\ntorchrun a.py $(( 1 + 1 )) $P\n",
        };
        for (const std::string& script : scripts)
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
        QCOMPARE(readerLaunches(scripts[0]), std::string("<a.py><12><102>\n"));
        QCOMPARE(readerLaunches(scripts[1]), std::string("<a.py><12><121>\n"));
        // A value the reader cannot evaluate keeps the variable as it was, with a warning.
        QVERIFY(readerWarns("declare -i L=4\nL=$(nproc)\ntorchrun a.py $L\n", "has the integer attribute"));
    }

    void statusesArgumentsAndEmptyValuesReviewed()
    {
        // set -- gives the arguments; options alone (set -euo pipefail) do not.
        ScriptInputs two;
        two.arguments = {"2"};
        const std::string setArgs = "set -euo pipefail\nset -- 4 x\ntorchrun a.py $1 $#\n";
        QCOMPARE(readerLaunchesWith(setArgs, two), bashLaunchesWith(setArgs, two));
        QCOMPARE(readerLaunches(setArgs), std::string("<a.py><4><2>\n"));
        // mapfile -t takes no value: the array is the name after it.
        QCOMPARE(warningsWith("mapfile -t HOSTS < /etc/hostname\ntorchrun a.py\n", "mapfile"),
                 std::vector<std::string>{"line 1: mapfile sets HOSTS from input the text does not give; its value is kept as ${HOSTS}"});
        // $? is tried with the numbers the test names: [ $? -eq 127 ] is no test of success.
        QVERIFY(readerWarns("TP=4\nnvidia-smi -L\nif [ $? -eq 127 ]; then TP=1; fi\ntorchrun a.py $TP\n",
                            "line 3: TP is set in a branch whose condition cannot be decided from the text"));
        // Status 0 after a case that matched nothing, a function definition, export (whatever
        // its substitution did); shift N fails with fewer arguments.
        ScriptInputs one;
        one.arguments = {"4"};
        for (const std::string& script :
             {std::string("TP=2\nfalse\ncase x in y) ;; esac\n[ $? -eq 0 ] && TP=4\ntorchrun a.py $TP\n"),
              std::string("TP=2\nfalse\nf() { :; }\n[ $? -eq 0 ] && TP=4\ntorchrun a.py $TP\n"),
              std::string("TP=2\nexport X=$(false) Y=$((2 + 2))\n[ $? -eq 0 ] && TP=4\ntorchrun a.py $TP\n"),
              std::string("TP=2\nshift 2 || exit 1\nTP=4\ntorchrun a.py $TP\n"), std::string("shift\n[ $? = 0 ] && torchrun a.py $#\n")}) {
            QCOMPARE(readerLaunchesWith(script, one), bashLaunchesWith(script, one));
            QVERIFY2(!readerWarns(script, "cannot be decided"), script.c_str());
        }
        // `! cmd; [ $? -ne 0 ]`: the exit runs when cmd succeeds, so it is no guard.
        QVERIFY(readerWarns("! mkdir -p /tmp/hapmoe-ck\nif [ $? -ne 0 ]; then exit 1; fi\ntorchrun a.py\n",
                            "exit runs only if `mkdir -p /tmp/hapmoe-ck` succeeds"));
        // The empty-value warning only where the empty value decided a comparison: not when
        // the test holds whatever it is, not for a test of emptiness or a usage check.
        for (const std::string& quiet : {std::string("X=1\nif [ \"$1\" = big -o \"$X\" = 1 ]; then TP=4; fi\ntorchrun a.py\n"),
                                         std::string("if [ \"x$MODE\" = \"x\" ] || [ \"$MODE\" = \"\" ]; then TP=4; fi\ntorchrun a.py\n"),
                                         std::string("if [ \"$1\" = \"-h\" ] || [ \"$1\" = \"help\" ]; then exit 0; fi\ntorchrun a.py\n")})
            QVERIFY2(!readerWarns(quiet, "as read"), quiet.c_str());
        // A kept ${ARG1} reached through a variable reads as empty in a test, as $1 does.
        const std::string size = "TP=2\nSIZE=$1\nif [ \"$SIZE\" = 70B ]; then TP=8; fi\n[ -z \"$SIZE\" ] && PP=1\ntorchrun a.py $TP $PP\n";
        QCOMPARE(readerLaunches(size), bashLaunches(size));
        QCOMPARE(warningsWith(size, "as read"),
                 std::vector<std::string>{"line 3: the test `[ \"$SIZE\" = 70B ]` fails as read, with $1 empty: the script's "
                                          "arguments are not given (give the arguments to read the script as it runs)"});
        // A variable a branch on the arguments would set depends on them: an exit on it is a
        // guard the real run passes.
        const std::string branchSets = "P=\"\"\nif [ -n \"$1\" ]; then P=$1; fi\n[ -z \"$P\" ] && { echo need; exit 1; }\ntorchrun a.py\n";
        QCOMPARE(readerLaunches(branchSets), std::string("<a.py>\n"));
        QCOMPARE(warningsWith(branchSets, "exit 1"),
                 std::vector<std::string>{"line 3: exit 1 depends on $1, from the script's own arguments: read as not taken"});
    }

    void uvRunAndHybridModels()
    {
        // `uv run [options]` and `nsys profile [options]` run the launch command after them
        // (Megatron-LM's examples/megatron_fsdp and mimo scripts use uv).
        const std::string flags = " --num-layers 8 --hidden-size 1024 --num-attention-heads 8 --seq-length 1024 "
                                  "--max-position-embeddings 1024 --micro-batch-size 1 --global-batch-size 16 --bf16\n";
        const ImportedScript uv = importMegatronScript(
            "exec uv run --no-sync --project /opt/megatron python -m torch.distributed.run --nproc_per_node 8 pretrain_gpt.py "
            "--tensor-model-parallel-size 2" + flags,
            "uv.sh");
        QCOMPARE(uv.launcher, std::string("python -m torch.distributed.run"));
        QCOMPARE(uv.nproc_per_node, 8);
        QCOMPARE(uv.parallel.tp, 2);
        const ImportedScript nsys = importMegatronScript(
            "nsys profile -s none -t nvtx,cuda -o prof --force-overwrite true torchrun --nproc_per_node 4 pretrain_gpt.py" + flags,
            "nsys.sh");
        QCOMPARE(nsys.launcher, std::string("torchrun"));
        QCOMPARE(nsys.nproc_per_node, 4);
        // A sweep runs the launch once per configuration: the first is read, and said.
        const ImportedScript sweep = importMegatronScript("for TP in 1 2 4; do\n  torchrun --nproc_per_node 8 pretrain_gpt.py "
                                                          "--tensor-model-parallel-size $TP" + flags + "done\n",
                                                          "sweep.sh");
        QCOMPARE(sweep.parallel.tp, 1);
        QVERIFY(hasWarning(sweep, "line 2: the launch command runs 3 times (a loop over configurations); the first run is read"));
        // A hybrid Mamba model gives its layers as a pattern the cost model cannot plan: refused
        // with the flag, not as a missing --num-layers.
        const ImportedScript hybrid = importMegatronScript(
            "torchrun --nproc_per_node 8 pretrain_hybrid.py --hybrid-layer-pattern 'M-M*-M-M*' --hidden-size 1024 "
            "--num-attention-heads 8 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 --global-batch-size 16\n",
            "hybrid.sh");
        try {
            validateScriptModel(hybrid);
            QFAIL("a hybrid Mamba model was accepted");
        } catch (const InputError& e) {
            QCOMPARE(e.where(), std::string("--hybrid-layer-pattern"));
            QVERIFY(std::string(e.what()).find("a hybrid Mamba model (pretrain_hybrid.py)") != std::string::npos);
        }
    }

    void flagscaleForkFlags()
    {
        // FlagScale's own launch scripts (its examples/aquila 70B) start pretrain_gpt.py of its
        // fork with flags Megatron-LM lacks. The FFN size from --multiple-of and
        // --hidden-dim-multiplier, as FlagScale's arguments.py computes it: h = 8192,
        // int(8h/3) = 21845, x 1.3 = 28398, rounded up to a multiple of 4096: 28672.
        const std::string head = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 8192 "
                                 "--num-attention-heads 64 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 "
                                 "--global-batch-size 16 --bf16 --tensor-model-parallel-size 8 --swiglu ";
        const ImportedScript aquila = importMegatronScript(head + "--multiple-of 4096 --hidden-dim-multiplier 1.3 "
                                                                  "--tokenizer-type AquilaTokenizer --vocab-size 100008\n",
                                                           "aquila.sh");
        QCOMPARE(aquila.model.ffn_hidden_size, 28672);
        // Without the multiplier: 21845 rounded up to 24576. An explicit --ffn-hidden-size wins.
        QCOMPARE(importMegatronScript(head + "--multiple-of 4096\n", "m.sh").model.ffn_hidden_size, 24576);
        QCOMPARE(importMegatronScript(head + "--multiple-of 4096 --ffn-hidden-size 20480\n", "m.sh").model.ffn_hidden_size, 20480);
        // The fork's tokenizers are its own choices: accepted, the vocabulary from --vocab-size.
        const std::string forkTokenizer = refusalOf(head + "--multiple-of 4096 --hidden-dim-multiplier 1.3 --tokenizer-type "
                                                           "AquilaTokenizer --vocab-size 100008\n",
                                                    "aquila.sh");
        QVERIFY2(forkTokenizer == "accepted", forkTokenizer.c_str());
        QCOMPARE(aquila.model.vocab_size, 100008);
        // Megatron-LM's argparse refuses a tokenizer outside its choices.
        QVERIFY(refusalOf(head + "--tokenizer-type AquilaTokenizer --vocab-size 100008\n", "plain.sh").find("expected one of")
                != std::string::npos);
        // --quick-geglu (gpt-oss) is a gated MLP: three matrices, as SwiGLU. Its sliding-window
        // attention is said not to be modelled.
        const auto small = [](const std::string& extra) {
            return importMegatronScript("torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
                                        "--num-attention-heads 8 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 "
                                        "--global-batch-size 16 " + extra + "\n",
                                        "small.sh");
        };
        const ImportedScript geglu = small("--ffn-hidden-size 2048 --quick-geglu");
        QVERIFY(geglu.model.swiglu);
        QCOMPARE(geglu.model.ffn_hidden_size, 2048);
        QVERIFY(hasWarning(geglu, "--quick-geglu is a gated MLP"));
        const ImportedScript older = small("--hetero-mode pp --hetero-device-types A800 A100 --hetero-pipeline-stages 1 4 1 4");
        QVERIFY(hasWarning(older, "--hetero-pipeline-stages is FlagScale's older heterogeneous format, not read here"));
        const ImportedScript window = small("--window-size 127,0 --window-attn-skip-freq 2");
        QVERIFY(hasWarning(window, "--window-size (sliding-window attention) is not modelled"));
    }

    void unmodelledPartsAreWarned()
    {
        // What the cost model leaves out is said, not dropped silently: selective recompute of
        // modules of attention variants it does not have, other model families' entries. MTP
        // depths are read into the model (docs/cost-model.md section 3.9), and a layout must
        // place as many `m` (validate_layer_layout).
        const std::string flags = " --num-layers 8 --hidden-size 1024 --num-attention-heads 8 --seq-length 1024 "
                                  "--max-position-embeddings 1024 --micro-batch-size 1 --global-batch-size 16 --bf16";
        const ImportedScript mtp = importMegatronScript("torchrun --nproc_per_node 8 pretrain_gpt.py" + flags
                                                            + " --untie-embeddings-and-output-weights --mtp-num-layers 1\n",
                                                        "mtp.sh");
        QCOMPARE(mtp.model.mtp_num_layers, 1);
        QVERIFY(!hasWarning(mtp, "--mtp-num-layers"));
        const std::string split = " --pipeline-model-parallel-size 2 --untie-embeddings-and-output-weights";
        QCOMPARE(refusalOf("torchrun --nproc_per_node 8 pretrain_gpt.py" + flags + split
                               + " --mtp-num-layers 1 --pipeline-model-parallel-layout 'Et*4|t*4mL'\n", "l.sh"),
                 std::string("accepted"));
        QVERIFY(refusalOf("torchrun --nproc_per_node 8 pretrain_gpt.py" + flags + split + " --pipeline-model-parallel-layout 'Et*4|t*4mL'\n",
                          "l.sh")
                    .find("the layout places 1 MTP layer(s), --mtp-num-layers is 0") != std::string::npos);
        // Megatron-LM d98e8a64's validate_layer_layout: no decoder layer after an MTP layer, the
        // MTP layers in one stage, the last virtual stage of their rank. A rank before the last
        // may hold them (standalone MTP); the cost model puts them on the last stage, and says so.
        const auto layoutRefusal = [&](const std::string& layout, int mtpLayers) {
            return refusalOf("torchrun --nproc_per_node 8 pretrain_gpt.py" + flags + split + " --mtp-num-layers "
                                 + std::to_string(mtpLayers) + " --pipeline-model-parallel-layout '" + layout + "'\n",
                             "l.sh");
        };
        QVERIFY(layoutRefusal("Et*3m|t*5L", 1).find("\"decoder layers must be placed before MTP layers\"") != std::string::npos);
        QVERIFY(layoutRefusal("Et*4m|t*4mL", 2).find("\"All of the MTP layers must be in the same one virtual pipeline stage\"")
                != std::string::npos);
        QVERIFY(layoutRefusal("Et*4|t*4m||L", 1).find("the MTP layers are in virtual stage 0 of pipeline rank 1, not its last")
                != std::string::npos);
        QCOMPARE(layoutRefusal("Et*4|t*4mL", 1), std::string("accepted"));
        const ImportedScript standalone = importMegatronScript("torchrun --nproc_per_node 8 pretrain_gpt.py" + flags + split
                                                                   + " --mtp-num-layers 1 --pipeline-model-parallel-layout 'Et*4|t*3|tm|L'\n",
                                                               "s.sh");
        QVERIFY(hasWarning(standalone, "the layout puts the MTP layers on pipeline rank 0, before the last"));
        const ImportedScript modules = importMegatronScript(
            "torchrun --nproc_per_node 8 pretrain_gpt.py" + flags + " --recompute-granularity selective --recompute-modules core_attn mlp\n",
            "rm.sh");
        QCOMPARE(modules.parallel.recompute, Recompute::Selective);
        QCOMPARE(modules.parallel.recompute_modules, recompute_module::core_attn | recompute_module::mlp);
        QVERIFY(!hasWarning(modules, "--recompute-modules"));
        // MLA's up projections (the DeepSeek-V3 recipe's "mla_up_proj mlp") are a module the
        // model knows.
        const ImportedScript mla = importMegatronScript("torchrun --nproc_per_node 8 pretrain_gpt.py" + flags
                                                            + " --multi-latent-attention --recompute-granularity selective "
                                                              "--recompute-modules mla_up_proj mlp\n",
                                                        "mla.sh");
        QCOMPARE(mla.parallel.recompute_modules, recompute_module::mla_up_proj | recompute_module::mlp);
        QVERIFY(!hasWarning(mla, "--recompute-modules"));
        // What TransformerConfig refuses is refused: a name it does not know (a comma-joined
        // list is one such name), a variant's module without the variant, moe_act without
        // grouped GEMM (dense models too), moe_act or layernorm under delayed-scaling FP8.
        const std::string head = "torchrun --nproc_per_node 8 pretrain_gpt.py" + flags + " --recompute-granularity selective ";
        QVERIFY(refusalOf(head + "--recompute-modules core_attn foo\n", "f.sh")
                    .find("f.sh: --recompute-modules: \"foo\" is not a module of Megatron-LM") != std::string::npos);
        QVERIFY(refusalOf(head + "--recompute-modules moe_act,layernorm --moe-grouped-gemm\n", "c.sh").find("separate them with spaces")
                != std::string::npos);
        QVERIFY(refusalOf(head + "--recompute-modules mla_up_proj\n", "m.sh")
                    .find("m.sh: --recompute-modules: mla_up_proj needs --multi-latent-attention") != std::string::npos);
        QVERIFY(refusalOf(head + "--recompute-modules moe_act mlp\n", "d.sh").find("moe_act needs --moe-grouped-gemm") != std::string::npos);
        QVERIFY(refusalOf(head + "--recompute-modules layernorm --fp8-format hybrid\n", "p.sh")
                    .find("p.sh: --recompute-modules: layernorm under FP8 with delayed scaling") != std::string::npos);
        QCOMPARE(importMegatronScript(head + "--recompute-modules layernorm --fp8-format hybrid --fp8-recipe tensorwise\n", "t.sh")
                     .parallel.recompute_modules,
                 recompute_module::layernorm);
        // The whole MoE layer with the EP all-to-all overlap: Megatron-LM d98e8a64 asserts
        // "disable moe in recompute_modules when enabling overlap_moe_expert_parallel_comm",
        // whether the list or --moe-layer-recompute names it.
        QVERIFY(refusalOf(head + "--recompute-modules layernorm moe --overlap-moe-expert-parallel-comm\n", "a.sh")
                    .find("a.sh: --recompute-modules: moe with --overlap-moe-expert-parallel-comm") != std::string::npos);
        const std::string byFlag = refusalOf("torchrun --nproc_per_node 8 pretrain_gpt.py" + flags
                                                 + " --moe-layer-recompute --overlap-moe-expert-parallel-comm\n",
                                             "l.sh");
        QVERIFY2(byFlag.find("l.sh: --moe-layer-recompute: --moe-layer-recompute with --overlap-moe-expert-parallel-comm")
                     != std::string::npos,
                 byFlag.c_str());
        QCOMPARE(importMegatronScript(head + "--recompute-modules layernorm moe\n", "n.sh").parallel.recompute_modules,
                 recompute_module::layernorm | recompute_module::moe);
        // Nor with Transformer Engine's CUDA graphs of the moe_router scope ("moe recompute is
        // not supported with moe_router CUDA graph"), nor with offloading inside the MoE layer
        // ("Cannot offload ... while recomputing the entire MoE layer").
        QVERIFY(refusalOf(head + "--recompute-modules moe --cuda-graph-impl transformer_engine --cuda-graph-scope attn "
                                 "moe_router\n",
                          "g.sh")
                    .find("g.sh: --cuda-graph-scope: moe_router with the whole MoE layer recomputed (moe)") != std::string::npos);
        // The same by --cuda-graph-modules, the flag of which --cuda-graph-scope is the deprecated alias.
        QVERIFY(refusalOf(head + "--recompute-modules moe --cuda-graph-impl transformer_engine --cuda-graph-modules moe_router\n",
                          "gm.sh")
                    .find("gm.sh: --cuda-graph-modules: moe_router with the whole MoE layer recomputed (moe)") != std::string::npos);
        QVERIFY(refusalOf(head + "--recompute-modules moe --fine-grained-activation-offloading --offload-modules core_attn "
                                 "moe_act\n",
                          "o.sh")
                    .find("o.sh: --offload-modules: moe_act offloaded inside the MoE layer that is recomputed whole (moe)")
                != std::string::npos);
        QCOMPARE(importMegatronScript(head + "--recompute-modules moe --cuda-graph-impl transformer_engine --cuda-graph-scope "
                                             "attn --fine-grained-activation-offloading --offload-modules core_attn\n",
                                      "ok.sh")
                     .parallel.recompute_modules,
                 recompute_module::moe);
        const ImportedScript attn = importMegatronScript(
            "torchrun --nproc_per_node 8 pretrain_gpt.py" + flags + " --recompute-granularity selective --recompute-modules core_attn\n",
            "ca.sh");
        QVERIFY(!hasWarning(attn, "--recompute-modules"));
        const ImportedScript bert = importMegatronScript("torchrun --nproc_per_node 8 pretrain_bert.py" + flags + "\n", "bert.sh");
        QVERIFY(hasWarning(bert, "pretrain_bert.py does not train a GPT decoder alone"));
        QVERIFY(!hasWarning(mtp, "does not train a GPT decoder"));
        // A batch schedule beside a fixed global batch: Megatron-LM raises (its microbatches
        // calculator), and so does the import; alone it is said not to be modelled.
        const std::string noGbs = " --num-layers 8 --hidden-size 1024 --num-attention-heads 8 --seq-length 1024 "
                                  "--max-position-embeddings 1024 --micro-batch-size 1 --bf16";
        QVERIFY2(refusalOf("torchrun --nproc_per_node 8 pretrain_gpt.py" + flags + " --step-batch-size-schedule '0:8 256:16'\n", "s.sh")
                     .find("--step-batch-size-schedule: given with --global-batch-size: Megatron-LM raises \"Cannot specify both "
                           "--step-batch-size-schedule and --global-batch-size\"")
                     != std::string::npos,
                 refusalOf("torchrun --nproc_per_node 8 pretrain_gpt.py" + flags + " --step-batch-size-schedule '0:8 256:16'\n", "s.sh")
                     .c_str());
        const ImportedScript schedule = importMegatronScript(
            "torchrun --nproc_per_node 8 pretrain_gpt.py" + noGbs + " --step-batch-size-schedule '0:8 256:16'\n", "s.sh");
        QVERIFY(hasWarning(schedule, "--step-batch-size-schedule is not modelled"));
    }

    void placeholdersAreSaid()
    {
        // Megatron-LM's example scripts ship CHECKPOINT_PATH=<Specify path>, which bash -n
        // refuses ("syntax error near unexpected token `newline'"): read on, with a warning
        // that names the line.
        const std::string script = "CHECKPOINT_PATH=<Specify path>\ntorchrun pretrain_gpt.py --save $CHECKPOINT_PATH\n";
        QVERIFY(readerWarns(script, "line 1: the redirection > has no file after it, a syntax error at which bash stops"));
        QCOMPARE(readerLaunches(script), std::string("<pretrain_gpt.py><--save><${CHECKPOINT_PATH}>\n"));
        QVERIFY(!readerWarns("echo hi > out.txt\ncat < in.txt\ntorchrun a.py\n", "has no file after it"));
        // One word (X=<PATH>) likewise: the assignment belongs to the placeholder's line, which
        // bash does not run, so the variable stays a reference rather than an empty value
        // (which left --save without its value).
        const std::string oneWord = "CHECKPOINT_PATH=<PATH>\ntorchrun pretrain_gpt.py --save $CHECKPOINT_PATH\n";
        QVERIFY(readerWarns(oneWord, "line 1: the redirection > has no file after it"));
        QCOMPARE(readerLaunches(oneWord), std::string("<pretrain_gpt.py><--save><${CHECKPOINT_PATH}>\n"));
        // After other assignments, or declared: only the placeholder's assignment is left out
        // (A keeps its 1), and a value the variable held before is not kept either.
        QCOMPARE(readerLaunches("A=1 CK=<PATH>\ntorchrun pretrain_gpt.py --load $A --save $CK\n"),
                 std::string("<pretrain_gpt.py><--load><1><--save><${CK}>\n"));
        QCOMPARE(readerLaunches("export CK=<PATH>\ntorchrun pretrain_gpt.py --save $CK\n"),
                 std::string("<pretrain_gpt.py><--save><${CK}>\n"));
        QCOMPARE(readerLaunches("CK=/real\nCK=<PATH>\ntorchrun pretrain_gpt.py --save $CK\n"),
                 std::string("<pretrain_gpt.py><--save><${CK}>\n"));
        // A launch line ending in such a redirection is still the launch.
        QCOMPARE(readerLaunches("torchrun pretrain_gpt.py --save /c >\n"), std::string("<pretrain_gpt.py><--save></c>\n"));
        // A flag's value written as a placeholder (--data-path <PATH TO DATA>), which bash reads
        // as redirections from PATH and to the next word: read as filled in, a reference named
        // after the flag, where it had been "--data-path TO DATA" and the next flag lost.
        const std::string inline_ = "torchrun pretrain_gpt.py --data-path <PATH TO DATA> --tokenizer-model <PATH_TO_TOKENIZER> --bf16\n";
        QCOMPARE(readerLaunches(inline_),
                 std::string("<pretrain_gpt.py><--data-path><${DATA_PATH}><--tokenizer-model><${TOKENIZER_MODEL}><--bf16>\n"));
        QVERIFY(readerWarns(inline_, "line 1: --data-path <PATH TO DATA>: a placeholder left to fill in"));
        QVERIFY(!readerWarns(inline_, "would come from the environment"));
        // A variable of the flag's name that the script sets is not the placeholder's value.
        QCOMPARE(readerLaunches("DATA_PATH=/data/old\ntorchrun pretrain_gpt.py --data-path <PATH TO DATA>\n"),
                 std::string("<pretrain_gpt.py><--data-path><${DATA_PATH_VALUE}>\n"));
        // Input from a file with another descriptor redirected after it is bash's.
        QVERIFY(!readerWarns("torchrun pretrain_gpt.py --bf16 <stdin.txt 2>err.log\n", "placeholder"));
        // Not a placeholder: a process substitution, a here-string, input from a file.
        QVERIFY(!readerWarns("torchrun pretrain_gpt.py --data-path <(ls) --bf16\n", "placeholder"));
        QVERIFY(readerLaunches("torchrun pretrain_gpt.py --data-path <(ls) --bf16\n").find("${DATA_PATH}") == std::string::npos);
        QVERIFY(!readerWarns("torchrun pretrain_gpt.py --bf16 < in.txt\n", "placeholder"));
        QVERIFY(!readerWarns("torchrun pretrain_gpt.py --bf16 < in.txt > out.txt\n", "placeholder"));
        QVERIFY(!readerWarns("torchrun pretrain_gpt.py --bf16 <<< word\n", "placeholder"));
        // In a text run as commands (a command string, eval): at the script's line where it is
        // written once (line 4 here, the string's line 3; also through a variable, as
        // Megatron-LM's old pretrain_gpt3_175B.sh runs srun ... sh -c "${run_cmd}"), else at
        // the line of the command that runs the text with its line in the text.
        const std::string said = ": --save <PATH TO SAVE>: a placeholder left to fill in (bash would read < and > as "
                                 "redirections); read as filled in, as ${SAVE}, which an exported launcher requires to be set";
        QCOMPARE(warningsWith("X=1\nsrun -N 2 bash -c '\ntorchrun pretrain_gpt.py --bf16 \\\n  --save <PATH TO SAVE>\n'\n",
                              "PATH TO SAVE"),
                 std::vector<std::string>{"line 4" + said});
        QCOMPARE(warningsWith("OPTS=\"--bf16 \\\n  --save \\\n  <PATH TO SAVE>\"\nCMD=\"torchrun pretrain_gpt.py ${OPTS}\"\n"
                              "srun -N 2 sh -c \"${CMD}\"\n",
                              "PATH TO SAVE"),
                 std::vector<std::string>{"line 2" + said});
        QCOMPARE(warningsWith("# --save <PATH TO SAVE> as below\nsrun -N 2 bash -c '\ntorchrun pretrain_gpt.py --bf16 \\\n"
                              "  --save <PATH TO SAVE>\n'\n",
                              "PATH TO SAVE"),
                 std::vector<std::string>{"line 2" + said + " (line 3 of bash -c's text)"});
    }

    void checkpointArgsAreSaid()
    {
        // --use-checkpoint-args: Megatron-LM's load_args_from_checkpoint takes the model's
        // arguments from --load. Without them in the script the model is not in the script.
        const std::string launch = "torchrun --nproc_per_node 8 pretrain_gpt.py --use-checkpoint-args --load /ckpt "
                                   "--expert-model-parallel-size 4 --micro-batch-size 1 --global-batch-size 64 --bf16";
        QCOMPARE(refusalOf(launch + "\n", "ck.sh"),
                 std::string("ck.sh: --use-checkpoint-args: the script takes the model's arguments from the checkpoint in --load "
                             "\"/ckpt\", which import does not read, and gives no --num-layers, --hidden-size, "
                             "--num-attention-heads: add the model's flags to the script (the checkpoint's values)"));
        const ImportedScript given = importMegatronScript(
            launch + " --num-layers 2 --hidden-size 64 --num-attention-heads 2 --seq-length 128 --max-position-embeddings 128 "
                     "--num-experts 4 --disable-bias-linear\n",
            "ck.sh");
        QVERIFY(hasWarning(given, "--use-checkpoint-args: at run time the arguments saved in the checkpoint in --load \"/ckpt\" "
                                  "replace the script's; the model is read from the script's flags"));
    }

    void testsOnTheEnvironmentAreSaid()
    {
        // A variable set only in such a branch is said to be, with the test, not to come from
        // the environment.
        const std::string dataLaunch = "torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 "
                                       "--seq-length 128 --max-position-embeddings 128 --data-path $DATA\n";
        const ImportedScript branch = importMegatronScript(
            "MODEL=${MODEL:-none}\nif [ \"$MODEL\" = 7B ]; then\n  DATA=/data/7b\nfi\n" + dataLaunch, "branch.sh");
        QVERIFY(hasWarning(branch, "line 5: DATA is set only in a branch the reading skips, at line 2, whose test depends on MODEL"));
        QVERIFY(hasWarning(branch, "give what the run gives with --script-env to take the branch"));
        QVERIFY(!hasWarning(branch, "it would come from the environment"));
        QVERIFY(hasWarning(importMegatronScript(dataLaunch, "env.sh"), "DATA is not set in the script (it would come from the environment)"));
        // A branch that a test on the environment or the arguments skips as the script is read,
        // and that would have given the launch command Megatron-LM flags, is named with the
        // test's line and what would set it; once given, the flags are read.
        const std::string model = "ARGS=(--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 "
                                  "--max-position-embeddings 128)\n";
        const std::string script = model
            + "[ \"${FP8:-0}\" = 1 ] && ARGS+=(--fp8-format hybrid)\n"        // line 2: a && list
              "if [ -z \"$NO_DISTOPT\" ]; then\n"                               // line 3: the else of an if
              "  ARGS+=(--use-distributed-optimizer)\n"
              "else\n"
              "  ARGS+=(--overlap-grad-reduce)\n"
              "fi\n"
              "if [ \"$1\" = wandb ]; then ARGS+=(--wandb-project p); fi\n"    // line 8: an argument
              "EXTRA=\"\"\n"
              "if [ -n \"$K\" ]; then EXTRA=\"--log-throughput\"; fi\n"       // line 10: a scalar
              "OTHER=(--log-interval 1)\n"
              "if [ -n \"$K\" ]; then OTHER+=(--eval-iters 3); fi\n"            // line 12: replaced below
              "OTHER=(--eval-interval 5)\n"
              "if [ -n \"$K\" ]; then NEVER=(--log-timers-to-tensorboard); fi\n"   // line 14: set only there
              "if [ -n \"$K\" ]; then UNUSED=(--log-params-norm); fi\n"       // line 15: never read
              "if [ -n \"$K\" ]; then ARGS+=(--not-a-megatron-flag); fi\n"    // line 16: no flag of the target
              "torchrun --nproc_per_node 1 pretrain_gpt.py \"${ARGS[@]}\" $EXTRA \"${OTHER[@]}\" \"${NEVER[@]}\"\n";
        const ImportedScript s = importMegatronScript(script, "t.sh");
        std::vector<std::pair<int, std::string>> skipped;
        for (const ImportedScript::SkippedWords& w : s.skipped_by_test)
            skipped.emplace_back(w.line, w.words);
        QCOMPARE(skipped, (std::vector<std::pair<int, std::string>>{{2, "--fp8-format hybrid"},
                                                                    {3, "--overlap-grad-reduce"},
                                                                    {8, "--wandb-project p"},
                                                                    {10, "\"--log-throughput\""},
                                                                    {14, "--log-timers-to-tensorboard"}}));
        QCOMPARE(s.skipped_by_test[2].reads, std::vector<std::string>{"$1"});
        QVERIFY(hasWarning(s, "line 2: as the script is read, a test that depends on FP8, which the script does not set (its "
                              "environment), skips the branch that adds --fp8-format hybrid to ARGS, so the "
                              "launch command (line 17) lacks those words. Where the run gives FP8 in the script's "
                              "environment, give the same here to read the command as it runs"));
        QVERIFY(hasWarning(s, "skips the branch that sets EXTRA to \"--log-throughput\""));
        QVERIFY(hasWarning(s, "Where the run gives the script's arguments, give the same here"));
        QVERIFY(!findFlag(s, "--fp8-format") && !findFlag(s, "--eval-iters"));
        QVERIFY(hasWarning(s, "Where the run gives FP8 in the script's environment, give the same here"));
        // Both branches of an if set the array: the one skipped is still the alternative. A
        // test inside another is named at the outer test, which skips both. A loop over the
        // arguments not given has its own warning.
        const std::string launch = "torchrun --nproc_per_node 1 pretrain_gpt.py \"${ARGS[@]}\"\n";
        const ImportedScript both = importMegatronScript(model + "if [ -n \"$USE_FP8\" ]; then ARGS+=(--fp8-format hybrid); "
                                                         "else ARGS=(\"${ARGS[@]}\" --bf16); fi\n" + launch, "t.sh");
        QCOMPARE(both.skipped_by_test.size(), std::size_t(1));
        QCOMPARE(both.skipped_by_test.front().words, std::string("--fp8-format hybrid"));
        const ImportedScript nested = importMegatronScript(model + "if [ -n \"$A\" ]; then\n  if [ -n \"$B\" ]; then ARGS+=(--fp8-format hybrid); fi\nfi\n"
                                                           + launch, "t.sh");
        QCOMPARE(nested.skipped_by_test.size(), std::size_t(1));
        QCOMPARE(nested.skipped_by_test.front().line, 2);
        // A branch that sets a variable of the command to a number (a size): named too, as a
        // value the command reads without; a word that is not a number nor a flag is not.
        const ImportedScript sized = importMegatronScript(model + "TP=1\nif [ \"${USE_TP2:-0}\" = 1 ]; then TP=2; fi\n"
                                                          "NAME=run\nif [ -n \"$B\" ]; then NAME=big; fi\n"
                                                          "torchrun --nproc_per_node 2 pretrain_gpt.py \"${ARGS[@]}\" "
                                                          "--tensor-model-parallel-size $TP --wandb-exp-name $NAME\n", "t.sh");
        QCOMPARE(sized.skipped_by_test.size(), std::size_t(1));
        QCOMPARE(sized.skipped_by_test.front().name, std::string("TP"));
        QVERIFY(hasWarning(sized, "line 3: as the script is read, a test that depends on USE_TP2, which the script does not set (its "
                                  "environment), skips the branch that sets TP to 2, so the launch command (line 6) reads TP without "
                                  "that value"));
        const ImportedScript loop = importMegatronScript(model + "for a in \"$@\"; do ARGS+=(--fp8-format hybrid); done\n" + launch, "t.sh");
        QVERIFY(loop.skipped_by_test.empty());
        QVERIFY(hasWarning(loop, "the loop runs over the script's own arguments"));
        // Given, the branches run and nothing is said.
        ScriptInputs given;
        given.arguments = {"wandb"};
        given.environment = {{"FP8", "1"}, {"NO_DISTOPT", "1"}, {"K", "x"}};
        const ImportedScript g = importMegatronScript(script, "t.sh", given);
        QVERIFY(g.model.training.fp8() && findFlag(g, "--overlap-grad-reduce") && findFlag(g, "--wandb-project")
                && findFlag(g, "--log-throughput") && findFlag(g, "--log-timers-to-tensorboard"));
        QVERIFY(!findFlag(g, "--eval-iters"));
        // What was given decides the tests: the then of line 3 is skipped, as the user said.
        QVERIFY(g.skipped_by_test.empty());
        QVERIFY(!hasWarning(g, "as the script is read, a test"));
    }

    void sbatchDirectivesGiveTheAllocation()
    {
        // Inside a batch job srun takes the nodes and tasks srun does not give from the job's
        // allocation: the #SBATCH lines before the first command (sbatch(1)), as in Megatron-LM's
        // old pretrain_gpt3_175B.sh ("#SBATCH <SLURM OPTIONS> --nodes=128 --exclusive
        // --ntasks-per-node=8", then srun ... sh -c "${run_cmd}").
        const std::string launch = "srun python pretrain_gpt.py --num-layers 4 --hidden-size 256 --num-attention-heads 8 "
                                   "--seq-length 512 --max-position-embeddings 512 --micro-batch-size 1 --global-batch-size 64\n";
        const ImportedScript s = importMegatronScript("#!/bin/bash\n#SBATCH <SLURM OPTIONS> --nodes=4 --exclusive\n# a comment\n\n"
                                                      "#SBATCH --ntasks-per-node 8 # eight GPUs\n#SBATCHED --nodes=9\n" + launch,
                                                      "job.sh");
        QCOMPARE(s.nnodes, 4);
        QCOMPARE(s.nproc_per_node, 8);
        QCOMPARE(s.world_size, 32);
        QVERIFY(hasWarning(s, "line 2: srun takes --nodes=4, --ntasks-per-node 8 from the script's #SBATCH directives"));
        // srun's own options replace the directives'.
        const ImportedScript own = importMegatronScript("#SBATCH -N 4\n#SBATCH --ntasks-per-node=8\nsrun -N 2 " + launch.substr(5), "job.sh");
        QCOMPARE(own.world_size, 16);
        QVERIFY(hasWarning(own, "line 1: srun takes --ntasks-per-node=8 from the script's #SBATCH directives"));
        // After the first command, #SBATCH is a comment to sbatch too.
        const ImportedScript late = importMegatronScript("echo start\n#SBATCH --nodes=4 --ntasks-per-node=8\n" + launch, "job.sh");
        QCOMPARE(late.world_size, 1);
        QVERIFY(!hasWarning(late, "#SBATCH"));
    }

    void sbatchDirectivesSetTheJobsEnvironment()
    {
        // sbatch sets SLURM_JOB_NUM_NODES and SLURM_NNODES from --nodes (and SLURM_NTASKS,
        // SLURM_NTASKS_PER_NODE, SLURM_GPUS_PER_NODE from their options) in the job's
        // environment (sbatch(1), OUTPUT ENVIRONMENT VARIABLES): a batch script that gives
        // torchrun `--nnodes $SLURM_NNODES` launches on the directives' nodes.
        const std::string model = "--num-layers 4 --hidden-size 256 --num-attention-heads 8 --seq-length 512 "
                                  "--max-position-embeddings 512 --micro-batch-size 1 --global-batch-size 64 "
                                  "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2";
        const std::string job = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node 8\n"
                                "srun bash -c \"torchrun --nproc_per_node $SLURM_GPUS_PER_NODE --nnodes $SLURM_NNODES "
                                "--node_rank \\$SLURM_NODEID pretrain_gpt.py " + model + "\"\n";
        const ImportedScript s = importMegatronScript(job, "job.sh");
        QCOMPARE(s.nnodes, 2);
        QCOMPARE(s.nproc_per_node, 8);
        QCOMPARE(s.world_size, 16);
        QVERIFY(hasWarning(s, "line 2: taken from the #SBATCH directives, as sbatch sets them in the job's environment: "
                              "SLURM_GPUS_PER_NODE=8 (--gpus-per-node 8), SLURM_NNODES=2 (--nodes=2)"));
        QVERIFY(!hasWarning(s, "SLURM_NNODES is not set"));
        // The environment given wins (it is what the job ran with).
        ScriptInputs given;
        given.environment = {{"SLURM_NNODES", "4"}};
        const ImportedScript g = importMegatronScript(job, "job.sh", given);
        QCOMPARE(g.nnodes, 4);
        // A batch script on sbatch's standard input gets them from its directives and
        // sbatch's options (-N 3 over --nodes=2), whatever the submitting shell had.
        const ImportedScript here = importMegatronScript("SLURM_NNODES=7\nsbatch -N 3 <<'EOF'\n#!/bin/bash\n#SBATCH --nodes=2\n"
                                                         "torchrun --nproc_per_node 8 --nnodes $SLURM_JOB_NUM_NODES pretrain_gpt.py "
                                                             + model + "\nEOF\n",
                                                         "submit.sh");
        QCOMPARE(here.nnodes, 3);
        // A count that is not a number (a typed GPU count, a variable) sets nothing.
        const ImportedScript typed = importMegatronScript("#SBATCH --nodes=2 --gpus-per-node=h100:8\n"
                                                          "torchrun --nproc_per_node ${SLURM_GPUS_PER_NODE:-4} --nnodes $SLURM_NNODES pretrain_gpt.py "
                                                              + model + "\n",
                                                          "typed.sh");
        QCOMPARE(typed.nproc_per_node, 4);
        QCOMPARE(typed.nnodes, 2);
        // Without --ntasks, nodes x tasks per node: sbatch sets SLURM_NTASKS to 32 here; the
        // warning names only what the script reads (SLURM_NTASKS_PER_NODE is another name).
        const ImportedScript tasks = importMegatronScript("#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=8\n"
                                                          "NPROC=$((SLURM_NTASKS / SLURM_NNODES))\n"
                                                          "torchrun --nnodes $SLURM_NNODES --nproc_per_node $NPROC pretrain_gpt.py "
                                                              + model + "\n",
                                                          "tasks.sh");
        QCOMPARE(tasks.nnodes, 4);
        QCOMPARE(tasks.nproc_per_node, 8);
        QVERIFY(hasWarning(tasks, "SLURM_NTASKS=32 (--nodes=4 x --ntasks-per-node=8)"));
        const ImportedScript perNode = importMegatronScript("#SBATCH -N 4\n#SBATCH -n 32\n"
                                                            "torchrun --nnodes 4 --nproc_per_node $SLURM_NTASKS_PER_NODE pretrain_gpt.py "
                                                                + model + "\n",
                                                            "pernode.sh");
        QVERIFY(!hasWarning(perNode, "SLURM_NTASKS=32"));
    }

    void commandStringsAreNamed()
    {
        // A launch command held in a string a shell runs is read as that shell reads it, after
        // what runs the shell (Megatron-LM's old pretrain_gpt3_175B.sh: srun ... sh -c
        // "${run_cmd}", with srun's node and task counts). A string that holds no launch
        // command, and a batch job's standard input, are named in the refusal.
        const std::string model = "--num-layers 4 --hidden-size 256 --num-attention-heads 8 --seq-length 512 "
                                  "--max-position-embeddings 512 --micro-batch-size 1 --global-batch-size 64 "
                                  "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 2";
        const ImportedScript s = importMegatronScript("options=\"" + model + "\"\n"
                                                      "run_cmd=\"cd /work && python -u pretrain_gpt.py ${options} --data-path $DATA\"\n"
                                                      "srun -l -N 4 --ntasks-per-node 8 --container-image x \\\n"
                                                      "     sh -c \"${run_cmd}\"\n",
                                                      "s.sh");
        QCOMPARE(s.command_line, 3);
        QCOMPARE(s.launcher, std::string("python"));
        QCOMPARE(s.world_size, 32);   // srun -N 4 --ntasks-per-node 8
        QCOMPARE(s.parallel.tp, 8);
        QCOMPARE(s.parallel.pp, 2);
        QCOMPARE(s.model.num_layers, 4);
        // The string's $DATA is unset in the script: it comes from the environment.
        QVERIFY(hasWarning(s, "DATA is not set in the script"));
        // bash -lc with a single-quoted string: the inner shell expands it.
        const ImportedScript b = importMegatronScript("export GPUS=8\nbash -lc 'torchrun --nproc_per_node $GPUS pretrain_gpt.py " + model + "'\n",
                                                      "b.sh");
        QCOMPARE(b.world_size, 8);
        QCOMPARE(b.launcher, std::string("torchrun"));
        // What the string sets stays in its shell.
        QCOMPARE(refusalOf("sh -c 'X=1'\ntorchrun --nproc_per_node 8 pretrain_gpt.py " + model + " --seed $X\n", "x.sh"),
                 std::string("accepted"));
        QVERIFY(hasWarning(importMegatronScript("sh -c 'X=1'\ntorchrun --nproc_per_node 8 pretrain_gpt.py " + model + " --seed $X\n", "x.sh"),
                           "X is not set in the script"));
        // The words after the string are its $0, $1, ...; assignments before the command are
        // the new shell's environment; -o NAME and long options come before -c.
        const std::string small = "--num-layers 4 --hidden-size 256 --num-attention-heads 8 --seq-length 512 "
                                  "--max-position-embeddings 512 --micro-batch-size 1 --global-batch-size 64";
        const ImportedScript args = importMegatronScript("srun -N 4 --ntasks-per-node 8 bash -c 'python pretrain_gpt.py " + small
                                                             + " --tensor-model-parallel-size $1' bash 4\n",
                                                         "a.sh", ScriptInputs{{"2"}, {}});
        QCOMPARE(args.parallel.tp, 4);
        const ImportedScript prefixed = importMegatronScript("TP=4 CUDA_DEVICE_MAX_CONNECTIONS=1 srun -N 1 --ntasks-per-node 8 bash -o pipefail "
                                                             "--noprofile -c 'python pretrain_gpt.py " + small
                                                                 + " --tensor-model-parallel-size $TP'\n",
                                                             "p.sh");
        QCOMPARE(prefixed.parallel.tp, 4);
        QVERIFY(std::find(prefixed.environment.begin(), prefixed.environment.end(), "CUDA_DEVICE_MAX_CONNECTIONS=1") != prefixed.environment.end());
        const std::string viaLogin = refusalOf("bash -x -lc \"$CMD\"\n", "b.sh");
        QVERIFY2(viaLogin.find("no launch command found") != std::string::npos
                     && viaLogin.find("line 1 runs bash -c on a command string, which was read as commands and holds none of these "
                                      "either") != std::string::npos,
                 viaLogin.c_str());
        const std::string batch = refusalOf("sbatch job.sh\n", "j.sh");
        QVERIFY2(batch.find("line 1 submits a batch job (sbatch): a script on its standard input is read, a script file is not")
                     != std::string::npos,
                 batch.c_str());
        // A batch script on sbatch's standard input is read as sbatch runs it: its srun takes
        // the nodes from sbatch's -N (which replaces the script's --nodes=2) and the tasks from
        // its #SBATCH line; $NODES is the submitting script's, expanded in the here-document.
        const ImportedScript job = importMegatronScript("NODES=4\nsbatch --job-name=gpt -N $NODES <<EOF\n#!/bin/bash\n"
                                                        "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n"
                                                        "srun python pretrain_gpt.py " + model + "\nEOF\n",
                                                        "j.sh");
        QCOMPARE(job.command_line, 2);
        QCOMPARE(job.world_size, 32);
        QVERIFY(hasWarning(job, "line 2: srun takes -N 4, --ntasks-per-node=8 from the batch job's options"));
        // A command substitution in the here-document stays text; the rest expands as bash
        // expands it (\$TPX is the batch script's own variable). srun's -n wins over the
        // job's --ntasks-per-node, which is then a maximum (srun(1)).
        const ImportedScript escaped = importMegatronScript("sbatch -N 4 --ntasks-per-node 8 <<EOS\necho started $(date)\nTPX=4\n"
                                                            "srun -n 16 python pretrain_gpt.py " + small
                                                                + " --tensor-model-parallel-size \\$TPX\nEOS\n",
                                                            "e.sh");
        QCOMPARE(escaped.parallel.tp, 4);
        QCOMPARE(escaped.world_size, 16);
        QVERIFY(hasWarning(escaped, "srun takes -N 4 from the batch job's options"));
    }

    void loopsReviewed()
    {
        // A return inside a loop ends the function; braces expand in a for loop's words;
        // [[ ]] matches patterns and splits no word; quotes inside (( )) are removed; a loop
        // over the script's own arguments without them runs no turn, as bash run bare.
        const std::vector<std::string> exact = {
            "MODEL=13B\npick() { for c in 7B:1 13B:2; do if [ \"${c%%:*}\" = \"$MODEL\" ]; then TP=${c#*:}; return; fi; done; TP=1; }\n"
            "pick\ntorchrun a.py $TP\n",
            "f() { while true; do TP=2; return; done; TP=8; }\nf\ntorchrun a.py $TP\n",
            "N=0\nfor i in {1..4}; do N=$((N+1)); done\nL=\"\"\nfor x in a{b,c}d {3..1}; do L=\"$L $x\"; done\ntorchrun a.py $N $L $i\n",
            "M=llama-70b\nTP=1\n[[ $M == *70b* ]] && TP=8\n[[ $M != llama* ]] && TP=2\n[[ -n $MASTER_ADDR ]] && TP=3\n"
            "torchrun a.py $TP\n",
            "TP=2\nfor arg in \"$@\"; do case $arg in --tp=*) TP=\"${arg#*=}\" ;; esac; done\ntorchrun a.py $TP\n",
            "N=0\nwhile (( \"$N\" < 3 )); do (( N++ )); done\ntorchrun a.py $N\n",
        };
        for (const std::string& script : exact)
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
        QCOMPARE(readerLaunches(exact[2]), std::string("<a.py><4><abd><acd><3><2><1><4>\n"));
        ScriptInputs inputs;
        inputs.arguments = {"--tp=8"};
        QCOMPARE(readerLaunchesWith(exact[4], inputs), std::string("<a.py><8>\n"));
        QVERIFY(readerWarns(exact[4], "the loop runs over the script's own arguments, which are not given"));
        // `set -- "$@" ...` without the arguments leaves them unknown: the usage guard is one.
        const std::string setMore = "set -- \"$@\" --log-dir /x\nif [ $# -lt 3 ]; then exit 1; fi\ntorchrun a.py\n";
        QCOMPARE(readerLaunches(setMore), std::string("<a.py>\n"));
        QVERIFY(readerWarns(setMore, "exit 1 depends on $#"));
        // until on the arguments says that its condition holds; loops that never end stop at
        // the budget of all loops' turns, with a warning.
        QVERIFY(readerWarns("until [ $# -eq 0 ]; do shift; done\ntorchrun a.py\n", "and holds as read, so its body is not read"));
        QVERIFY(readerWarns("while :; do while :; do while :; do :; done; done; done\ntorchrun a.py\n",
                            "loops ran 20000 turns in all; the rest of this loop and of the loops after it is not read"));
    }

    void getoptsLoops()
    {
        // `while getopts OPTSTRING NAME` with the script's arguments given: one option per turn,
        // clusters (-ab), values joined or apart (-cfoo, -c foo), "--" and the first word that
        // is no option end it, OPTIND counts the words used, and OPTARG is unset again at the
        // end; a leading ':' makes NAME ':' or '?' with OPTARG the letter (bash's getopts,
        // manual 4.1). bash and the reader agree on every list.
        const std::string silent = "A=0; B=0; C=none\nwhile getopts \":abc:\" opt; do\n  case $opt in\n"
                                   "    a) A=$((A+1)) ;;\n    b) B=1 ;;\n    c) C=$OPTARG ;;\n    :) C=missing-$OPTARG ;;\n"
                                   "    \\?) C=bad-$OPTARG ;;\n  esac\ndone\nshift $((OPTIND-1))\n"
                                   "torchrun a.py $A $B $C $opt $OPTIND ${OPTARG-unset} \"$@\"\n";
        const std::vector<std::vector<std::string>> lists = {
            {"-ab", "-c", "x", "y"}, {"-a", "-a", "-a"}, {"-c"}, {"-cfoo"}, {"-c", "foo", "-b"}, {"-x"}, {"-ax", "-b"},
            {"--", "-a"}, {"-a", "-", "-b"}, {"y", "-a"}, {"-bcv", "w"}, {"-c", "-a"}, {"-a", "--"}};
        ScriptInputs inputs;
        for (const std::vector<std::string>& list : lists) {
            inputs.arguments = list;
            const std::string bash = bashLaunchesWith(silent, inputs);
            QVERIFY2(readerLaunchesWith(silent, inputs) == bash, (joinShellWords(list) + ": bash " + bash).c_str());
        }
        inputs.arguments = {"-ab", "-c", "x", "y"};
        QCOMPARE(readerLaunchesWith(silent, inputs), std::string("<a.py><1><1><x><?><4><unset><y>\n"));
        // In a function with `local OPTIND`, called with the script's arguments and with words
        // of its own; a usage exit on an unknown option.
        const std::string inFunction = "parse() {\n  local OPTIND opt\n  while getopts \"l:h:v\" opt; do\n    case \"$opt\" in\n"
                                       "      l) L=$OPTARG ;;\n      h) H=$OPTARG ;;\n      v) V=yes ;;\n      *) echo usage; exit 1 ;;\n"
                                       "    esac\n  done\n  shift $((OPTIND - 1))\n  REST=\"$*\"\n}\nL=2; H=64; V=no\n"
                                       "parse \"$@\"\nparse -l 4\ntorchrun a.py $L $H $V \"$REST\" $OPTIND\n";
        for (const std::vector<std::string>& list : {std::vector<std::string>{"-l", "6", "-h", "128", "x"},
                                                     std::vector<std::string>{"-v", "-l8"}, std::vector<std::string>{"-h", "32", "-v"}}) {
            inputs.arguments = list;
            const std::string bash = bashLaunchesWith(inFunction, inputs);
            QVERIFY2(readerLaunchesWith(inFunction, inputs) == bash, (joinShellWords(list) + ": bash " + bash).c_str());
        }
        inputs.arguments = {"-q"};
        QCOMPARE(bashLaunchesWith(inFunction, inputs), std::string("usage\n"));   // echo usage; exit 1
        QCOMPARE(readerLaunchesWith(inFunction, inputs), std::string());   // read as bash runs it: the usage exit
        QVERIFY(readerWarnsWith(inFunction, inputs, "getopts: -q is not an option of \"l:h:v\"; opt is set to ?"));
        // Without the arguments: no turn, as bash run bare, said; the defaults stay and what the
        // options would set depends on the arguments. Before, OPTARG was kept as text and the
        // launch got --tensor-model-parallel-size ${OPTARG}.
        const std::string tp = "TP=1\nwhile getopts \"t:\" o; do case $o in t) TP=$OPTARG ;; esac; done\n"
                               "torchrun a.py $TP $o $OPTIND\n";
        QCOMPARE(readerLaunches(tp), bashLaunches(tp));   // <a.py><1><?><1>
        QVERIFY(readerWarns(tp, "the loop's condition depends on $@, from the script's own arguments, and fails as read"));
    }

    void afterTheLaunchCommand()
    {
        // What the script does after the launch command ran cannot change it: an export there
        // is not in its environment, and what the reading finds there (a status kept as text,
        // an exit guard on the environment) is no finding of the import. Before the launch
        // (here inside a function called later) they are.
        const std::string script = "export NCCL_IB_TIMEOUT=22\nrun() {\n  torchrun --nproc_per_node 8 pretrain_gpt.py "
                                   "--num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 4096 "
                                   "--max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 64 --bf16\n}\n"
                                   "[ -z \"$GUARD\" ] && exit 1\nexport CUDA_DEVICE_MAX_CONNECTIONS=${CDMC:-1}\nrun\nRC=$?\n"
                                   "export NCCL_IB_TIMEOUT=5 AFTER=1\n[ -z \"$POST\" ] && exit 3\n"
                                   "if [ $RC -ne 0 ]; then echo failed; exit $RC; fi\n";
        const ImportedScript s = importMegatronScript(script, "after.sh");
        QCOMPARE(s.environment, (std::vector<std::string>{"NCCL_IB_TIMEOUT=22", "CUDA_DEVICE_MAX_CONNECTIONS=1"}));
        QCOMPARE(s.environment_raw.at("CUDA_DEVICE_MAX_CONNECTIONS"), std::string("${CDMC:-1}"));
        QVERIFY(hasWarning(s, "line 5: exit 1 depends on GUARD, which the script does not set (its environment): read as not taken"));
        for (const char* after : {"exit 3", "$? is the exit status", "line 8", "line 10", "line 11"})
            QVERIFY2(!hasWarning(s, after), after);
        // The reader itself still reports the whole script.
        QVERIFY(readerWarns(script, "exit 1 depends on GUARD, which the script does not set (its environment); line 10: exit 3 "
                                    "depends on POST"));
    }

    void indirectExpansionAndArgumentForms()
    {
        // ${!NAME} reads the variable NAME names (${!#} the last argument, ${!N} the one $N
        // names), ${!A[@]} the indices of A, ${!PREFIX@} the names that begin with PREFIX;
        // ${#@} is $#; "$*" and "${A[*]}" join with the first character of IFS (manual 3.5.3,
        // 3.4.2). bash and the reader agree.
        const std::string script = "MODEL_70B_TP=8; MODEL_7B_TP=2; SIZE=70B; S=\nV=MODEL_${SIZE}_TP; TP=${!V}\n"
                                   "A=(p q r); K=\"${!A[@]}\"; for i in \"${!A[@]}\"; do S=\"$S$i${A[$i]}\"; done\n"
                                   "P=\"${!MODEL_@}\"\nR=${!V:-x}\nL=${!#}\nF=${!1}\ntwo=second; W=${!2}; E=${!2:+set}\n"
                                   "N=${#@}; J=\"$*\"; IFS=,; J2=\"$*\"; J3=\"${A[*]}\"; IFS=; J4=\"$*\"; unset IFS; J5=\"$*\"\n"
                                   "torchrun a.py $TP \"$K\" $S \"$P\" $R $L $F $W $E $N \"$J\" $J2 $J3 $J4 \"$J5\"\n";
        ScriptInputs inputs;
        inputs.arguments = {"SIZE", "two"};
        QCOMPARE(bashLaunchesWith(script, inputs),
                 std::string("<a.py><8><0 1 2><0p1q2r><MODEL_70B_TP MODEL_7B_TP><8><two><70B><second><set><2><SIZE two><SIZE,two>"
                             "<p,q,r><SIZEtwo><SIZE two>\n"));
        QCOMPARE(readerLaunchesWith(script, inputs), bashLaunchesWith(script, inputs));
        inputs.arguments = {"V", "A"};
        QCOMPARE(readerLaunchesWith(script, inputs), bashLaunchesWith(script, inputs));
        // Without the arguments, a name read from $1 is not known: kept, and said once.
        QCOMPARE(warningsWith("F=${!1}\ntorchrun a.py $F\n", "${!1}"),
                 std::vector<std::string>{"line 1: ${!1}: the name it reads from $1 is not known; kept as text"});
    }

    void loopsInTheirOwnProcess()
    {
        // A loop that is a command of a pipeline, on either side, or runs with & is a child
        // process: what it sets is not the script's after it (manual 3.2.3). Before, its body
        // was read in the script's own variables.
        const std::string script = "TP=1; N=0\nfor x in a b; do TP=8; N=$((N+1)); done | tee /dev/null\n"
                                   "while [ $N -lt 2 ]; do N=$((N+1)); PP=4; done &\nwait\n"
                                   "echo x | while read -r l; do CP=2; done\nPP=${PP:-1}; CP=${CP:-1}\ntorchrun a.py $TP $N $PP $CP\n";
        QCOMPARE(bashLaunches(script), std::string("<a.py><1><0><1><1>\n"));
        QCOMPARE(readerLaunches(script), bashLaunches(script));
        // One inside still runs its body as often as bash does.
        const std::string sweep = "for tp in 1 2; do torchrun a.py $tp; done 2>&1 | tee log\n";
        QCOMPARE(readerLaunches(sweep), bashLaunches(sweep));   // <a.py><1>, <a.py><2>
    }

    void getoptsPatternsAndExportsReviewed()
    {
        // A review against bash found these; bash and the reader now agree on each.
        struct Case {
            std::string script;
            std::vector<std::string> arguments;
        };
        const std::vector<Case> cases = {
            // `local OPTIND` keeps the caller's place inside a cluster (-ab) for the return.
            {"sub() { local OPTIND o; while getopts xy o; do S=\"$S$o\"; done; }\nR=\nS=\nwhile getopts ab opt; do\n"
             "  R=\"$R$opt\"\n  case $opt in a) sub -xy ;; esac\ndone\ntorchrun a.py \"$R\" \"$S\" $OPTIND\n",
             {"-ab"}},
            // Any assignment to OPTIND starts getopts again, in a cluster too.
            {"N=0; R=\nwhile getopts abc o; do\n  R=\"$R$o\"; N=$((N+1))\n  if [ $N -eq 1 ]; then OPTIND=1; fi\n"
             "  [ $N -gt 6 ] && break\ndone\ntorchrun a.py \"$R\" $OPTIND\n",
             {"-ab"}},
            // getopts outside a loop's condition: in if, before && and ||, alone.
            {"if getopts \"t:\" o; then T=$OPTARG; fi\ngetopts \"p:\" o2 && P=$OPTARG\ngetopts \"v\" o3\n"
             "torchrun a.py $T $o $P $o2 $o3 $OPTIND\n",
             {"-t", "3", "-p", "4", "-v"}},
            {"TP=1; V=0\nwhile true; do\n  getopts \"t:v\" o || break\n  case $o in t) TP=$OPTARG ;; v) V=1 ;; esac\ndone\n"
             "torchrun a.py $TP $V\n",
             {"-t", "5", "-v"}},
            // OPTARG unset by an option without a value reads as empty.
            {"X=\nwhile getopts \"ab:\" o; do X=\"$X$o$OPTARG.\"; done\ntorchrun a.py \"$X\"\n", {"-a", "-b", "3", "-a"}},
            // Bash ignores OPTIND from the environment (below); a call with "$@" and words.
            {"TP=1; PP=1\nparse() { local OPTIND o; while getopts \"t:p:\" o; do case $o in t) TP=$OPTARG;; p) PP=$OPTARG;; "
             "esac; done; }\nparse \"$@\" -p 4\ntorchrun a.py $TP $PP\n",
             {}},
            // Quoted !, ^ and - inside brackets, $'...', a pattern ending in a backslash,
            // extended patterns in [[ ]] and after shopt -s extglob, groups in [[ ]] and test.
            {"case b in [\"!\"a]) R1=yes ;; *) R1=no ;; esac\n[[ b == [\\^a] ]] && R2=yes || R2=no\n"
             "case b in [a\"-\"c]) R3=yes ;; *) R3=no ;; esac\ncase - in [a\"-\"c]) R4=yes ;; *) R4=no ;; esac\n"
             "case abc in $'a*') R5=yes ;; *) R5=no ;; esac\nV='a*bc'; W=${V#$'a*'}\nP='a\\'\n"
             "[[ 'a\\' == $P ]] && R6=yes || R6=no\nx=bf16\n[[ $x == @(fp16|bf16) ]] && R7=yes || R7=no\n"
             "[[ $x == !(fp16) ]] && R8=yes || R8=no\n[[ ! ( $x == b* ) && ( -n $x || -z $x ) ]] && R9=yes || R9=no\n"
             "[ \\( \"$x\" = bf16 \\) -a ! \\( \"$x\" = q \\) ] && R10=yes || R10=no\nS='a  b'\n"
             "case $S in \"a  b\") R11=yes ;; *) R11=no ;; esac\n"
             "torchrun a.py $R1 $R2 $R3 $R4 $R5 $W $R6 $R7 $R8 $R9 $R10 $R11\n",
             {}},
            {"shopt -s extglob\ncase fp8 in +([a-z])+([0-9])) R=yes ;; *) R=no ;; esac\ntorchrun a.py $R\n", {}},
        };
        ScriptInputs inputs;
        for (const Case& c : cases) {
            inputs.arguments = c.arguments;
            const std::string bash = bashLaunchesWith(c.script, inputs);
            QVERIFY2(readerLaunchesWith(c.script, inputs) == bash, (c.script + "bash: " + bash).c_str());
        }
        QCOMPARE(bashLaunchesWith(cases[0].script, {{"-ab"}, {}}), std::string("<a.py><ab><xy><2>\n"));
        QCOMPARE(readerLaunches(cases[6].script), std::string("<a.py><no><no><no><yes><no><bc><yes><yes><yes><no><yes><yes>\n"));
        inputs.arguments = {"-t", "3"};
        inputs.environment = {{"OPTIND", "3"}};
        const std::string fromEnvironment = "while getopts \"t:\" o; do T=$OPTARG; done\ntorchrun a.py $T\n";
        QCOMPARE(readerLaunchesWith(fromEnvironment, inputs), std::string("<a.py><3>\n"));

        // export -n and declare +x take a name out of the environment, unset too; set -a exports
        // what is assigned until set +a. The import's environment is the launch command's.
        const ImportedScript s = importMegatronScript(
            "export A=1 B=2\nA=3\nexport -n B\nC=5; export C; declare +x C\nexport D=1; unset D; D=2\nset -a\nE=1\nset +a\n"
            "F=2\ntorchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --hidden-size 2048 --num-attention-heads 16 "
            "--seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 64 --bf16\n",
            "exports.sh");
        QCOMPARE(s.environment, (std::vector<std::string>{"A=3", "E=1"}));
        // A finding made only after the launch command is not the import's, even when the same
        // text was held apart earlier for a command's own words.
        const std::string late = "f() { echo \"$E_U\" >/dev/null; if [ \"$1\" = y ]; then V=$E_U; fi; }\nf n\n"
                                 "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --hidden-size 2048 "
                                 "--num-attention-heads 16 --seq-length 4096 --max-position-embeddings 4096 "
                                 "--micro-batch-size 1 --global-batch-size 64 --bf16\nf y\n";
        QVERIFY(!hasWarning(importMegatronScript(late, "late.sh"), "E_U"));
    }

    void expansionsAndTestsReviewedAgain()
    {
        // A second review against bash; bash and the reader agree on each.
        const std::vector<std::string> scripts = {
            // A value "(" is no group: three arguments compare; [[ ]] groups only its own text.
            "x=\"(\"\n[ \"$x\" = \")\" ] && R1=yes || R1=no\ntest \"$x\" != \")\" && R2=yes || R2=no\n"
            "[ \"$x\" = \")\" -o 1 = 1 ] && R3=yes || R3=no\n[[ $x == \"(\" && b == b ]] && R4=yes || R4=no\n"
            "[[ -n $x && -n b ]] && R5=yes || R5=no\n[[ -n $x &&\n   $x == \"(\" ]] && R6=yes || R6=no\n"
            "torchrun a.py $R1 $R2 $R3 $R4 $R5 $R6\n",
            // An array passed by name, and an element's value as the name.
            "A=(x y z); name=A; ref=\"${name}[@]\"; one=\"${name}[1]\"\nB=(\"${!ref}\")\nC=${!one}\nD=(X Y); X=xv; Y=yv\n"
            "torchrun a.py \"${B[@]}\" ${#B[@]} $C ${!D[1]}\n",
            // A subshell leaves getopts' place as it was; for OPTIND restarts; past the end.
            "R=\ngetopts abc o -abc; R+=$o\n( OPTIND=1 )\n( getopts abc o -abc )\ngetopts abc o -abc; R+=$o\n"
            "getopts abc o -abc; for OPTIND in 1; do :; done; getopts abc o -abc; R+=$o\n"
            "OPTIND=4; getopts ab o -a; R+=$o$OPTIND\ntorchrun a.py $R\n",
            // Extended patterns: after `shopt -s nullglob extglob`, not before it.
            "X=ab; P='@(a|b)'\nR1=${X#@(a|b)}\ncase a in $P) R2=yes ;; *) R2=no ;; esac\n[[ a == $P ]] && R3=yes || R3=no\n"
            "shopt -s nullglob extglob\ncase 123 in +([0-9])) R4=num ;; *) R4=other ;; esac\nR5=${X//+(a)/-}\n"
            "torchrun a.py $R1 $R2 $R3 $R4 $R5\n",
            // ${X/P/R} with patterns, anchored, every match, quoted parts literal.
            "x='a,b,c.d*e'; E=\nR1=${x//,/ }; R2=${x/,/}; R3=${x/#/pre}; R4=${x/%/suf}; R5=${x//a*/}; R6=${x//*/X}\n"
            "R7=${x//\\*/s}; R8=${x//\".\"/_}; R9=${x/#b/Q}; R10=${x//[!a-c]/-}; R11=${E//a/b}; R12=${x/%e/E}; R13=${x/b*/Z}\n"
            "torchrun a.py \"$R1\" $R2 $R3 $R4 \"$R5\" $R6 $R7 $R8 $R9 $R10 \"$R11\" $R12 $R13\n",
        };
        for (const std::string& script : scripts)
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script + "bash: " + bashLaunches(script)).c_str());
        QCOMPARE(readerLaunches(scripts[2]), std::string("<a.py><aba?2>\n"));

        // A local's unset or export -n, declare +x in a function, set -a in a subshell: the
        // script's exports stand; set -a exports a loop's name and getopts' too.
        const std::string launch = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --hidden-size 2048 "
                                   "--num-attention-heads 16 --seq-length 4096 --max-position-embeddings 4096 "
                                   "--micro-batch-size 1 --global-batch-size 64 --bf16\n";
        const ImportedScript s = importMegatronScript(
            "export A=1 B=1 C=1\nf() { local A=2; unset A; }\nf\ng() { declare +x B=5; }\ng\nh() { local C=3; export -n C; }\nh\n"
            "( set -a )\nD=1\nset -a\nfor F in 1; do :; done\ngetopts a O -a\nset +a\n" + launch,
            "exports.sh");
        QCOMPARE(s.environment, (std::vector<std::string>{"A=1", "B=1", "C=1", "F=1", "O=a", "OPTIND=2"}));   // as bash exports them
    }

    void substitutionsAndTestsReviewedAThirdTime()
    {
        // A third review against bash; bash and the reader agree on each.
        std::vector<std::string> scripts = {
            // ${X/P/R}: empty matches, a "/" escaped or quoted in P, & for the match, each
            // element of a list, a nested expansion in P.
            "shopt -s extglob\nx=abc\nM=meta-llama/Llama-2-7b-hf; P=/data/x; y=a.b; z=abcabc; q=xbx\nA=(ab cb db); B=(\"${A[@]/b/X}\")\n"
            "torchrun a.py \"${x//*()/-}\" \"${x//?(b)/-}\" \"${M//\\//_}\" \"${M//\"/\"/_}\" \"${P/#\\/data/\\/mnt}\" \"${y/./[&]}\" "
            "\"${y/./\\&}\" \"${B[@]}\" ${#B[@]} \"${A[*]/#/-}\" \"${A[@]#?}\" \"${z//${q//x}/Q}\"\n",
            // [ ] and test by their count of arguments; a value "(" or ")" is an operand.
            "x=\"(\"; a=x; e=; R=\n[ ! \"$x\" = \")\" ] && R+=1 || R+=0\n[ \"$a\" = \"(\" -o \"$a\" = x ] && R+=1 || R+=0\n"
            "[ \"$x\" = \")\" -o 1 = 1 ] && R+=1 || R+=0\n[ ! \\( \"$a\" = b -o \"$a\" = c \\) ] && R+=1 || R+=0\n"
            "[ \"$a\" -a \"$e\" ] && R+=1 || R+=0\n[ ! ! \"$a\" = x ] && R+=1 || R+=0\ntest \"(\" = \"(\" && R+=1 || R+=0\n"
            "torchrun a.py $R\n",
            // Newlines anywhere inside [[ ]]; the length of one element.
            "a=1; R=\n[[ $a == 2\n   || $a == 1 ]] && R+=1 || R+=0\n[[ $a == 1\n]] && R+=1 || R+=0\n[[ !\n   $a == 2 ]] && R+=1 || R+=0\n"
            "A=(Bee Cee)\ntorchrun a.py $R ${#A[1]}\n",
        };
        // A long value with a literal pattern (a data blend) is replaced at once.
        std::string blend = "B=\"";
        for (int k = 0; k < 800; ++k)
            blend += "0.5 /data/c" + std::to_string(k) + " ";
        scripts.push_back(blend + "\"\nC=${B// /,}\ntorchrun a.py ${#C} ${C:0:20}\n");
        for (const std::string& script : scripts)
            QVERIFY2(readerLaunches(script) == bashLaunches(script), (script.substr(0, 400) + "bash: " + bashLaunches(script)).c_str());
        QCOMPARE(readerLaunches(scripts[1]), std::string("<a.py><1111011>\n"));
        // Negative indices, ${!ref} with ref=@, "${!P*}" with IFS.
        const std::string more = "A=(x y z); set -- u v\nref=\"A[-1]\"; R=\"${!ref}|${A[-3]}\"\nref=@; R+=\"|${!ref}\"\n"
                                 "MY_A=1; MY_B=2; IFS=,; P=\"${!MY_*}\"; unset IFS\ntorchrun a.py \"$R\" $P\n";
        QCOMPARE(readerLaunches(more), std::string("<a.py><z|x|u v><MY_A,MY_B>\n"));
        QCOMPARE(readerLaunches(more), bashLaunches(more));
        // Bash never exports an array.
        const ImportedScript s = importMegatronScript(
            "E_A=(1 2); export E_A\nset -a; E_B=(3 4); E_C=5; set +a\ntorchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 "
            "--hidden-size 2048 --num-attention-heads 16 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 "
            "--global-batch-size 64 --bf16\n",
            "arrays.sh");
        QCOMPARE(s.environment, std::vector<std::string>{"E_C=5"});
    }

    void casePatternsQuoted()
    {
        // What the text quotes or escapes in a pattern matches itself; an unquoted expansion is
        // a pattern (manual 3.5.8.1). Before, `\?)` matched any one letter.
        const std::string script = "opt=a; S='x*y'; P='*'\ncase $opt in \\?) R=lit ;; a) R=a ;; esac\n"
                                   "case $opt in \"?\") R2=lit ;; *) R2=other ;; esac\ncase $opt in '*') R3=lit ;; *) R3=other ;; esac\n"
                                   "case $S in x\"*\"y) R4=lit ;; *) R4=other ;; esac\ncase $opt in $P) R5=glob ;; *) R5=other ;; esac\n"
                                   "case $opt in \"$P\") R6=lit ;; *) R6=other ;; esac\n[[ $S == x\\** ]] && R7=yes || R7=no\n"
                                   "[[ $opt == \"*\" ]] && R8=yes || R8=no\n[[ $opt == $P ]] && R9=yes || R9=no\n"
                                   "[[ \"a\\\\b\" == \"a\\\\b\" ]] && R10=yes || R10=no\nV=abc.json; W=${V%\".json\"}; X=${S#\"x*\"}; Y=${S#x?}\n"
                                   "torchrun a.py $R $R2 $R3 $R4 $R5 $R6 $R7 $R8 $R9 $R10 $W $X $Y\n";
        QCOMPARE(bashLaunches(script), std::string("<a.py><a><other><other><lit><glob><other><yes><no><yes><yes><abc><y><y>\n"));
        QCOMPARE(readerLaunches(script), bashLaunches(script));
    }

    void scriptInputsParse()
    {
        // Bash's quoting without expansions (manual 3.1.2): blanks split, quotes keep.
        QCOMPARE(splitShellWords("a 'b c'  \"d \\\"e\\\"\" f\\ g \"$X\"", "--script-args"),
                 (std::vector<std::string>{"a", "b c", "d \"e\"", "f g", "$X"}));
        QCOMPARE(bashOutput("printf '<%s>' a 'b c'  \"d \\\"e\\\"\" f\\ g '$X'"), std::string("<a><b c><d \"e\"><f g><$X>"));
        QCOMPARE(splitShellWords("''", "x"), std::vector<std::string>{""});
        QVERIFY_THROWS_EXCEPTION(InputError, splitShellWords("--size '70B", "--script-args"));
        const std::vector<std::string> words = {"70B", "two words", "it's", ""};
        QCOMPARE(splitShellWords(joinShellWords(words), "x"), words);
        ScriptInputs inputs;
        addScriptEnvironment(inputs, "NNODES=4", "--script-env");
        addScriptEnvironment(inputs, "DATA=a=b", "--script-env");
        QCOMPARE(inputs.environment.at("DATA"), std::string("a=b"));
        for (const char* bad : {"1X=2", "NNODES", "=4", "A-B=1"}) {
            try {
                addScriptEnvironment(inputs, bad, "--script-env");
                QFAIL(bad);
            } catch (const InputError& e) {
                QCOMPARE(e.where(), std::string("--script-env"));
            }
        }
    }

    void unknownStatusesAndValues()
    {
        // `cmd; if [ $? -ne 0 ]; then exit 1; fi`: the test is the command's status read with its
        // sense, so the exit is a guard the real run passes.
        const std::string checked = "mkdir -p /tmp/hapmoe-q\nif [ $? -ne 0 ]; then echo failed; exit 1; fi\ntorchrun a.py\n";
        QCOMPARE(readerLaunches(checked), bashLaunches(checked));
        QCOMPARE(warningsWith(checked, "exit"),
                 std::vector<std::string>{"line 2: exit 1 depends on the exit status of `mkdir -p /tmp/hapmoe-q`: read as not taken"});
        // After a command the text decides (an assignment, a test), $? is known.
        for (const std::string& decided : {std::string("X=1\nTP=2\n[ $? -eq 0 ] && TP=4\ntorchrun a.py $TP\n"),
                                           std::string("TP=2\n[ 1 = 2 ]\n[ $? -eq 1 ] && TP=4\ntorchrun a.py $TP\n")}) {
            QCOMPARE(readerLaunches(decided), bashLaunches(decided));
            QCOMPARE(readerLaunches(decided), std::string("<a.py><4>\n"));
        }
        // `which srun; BATCH=$((1-$?))` (Megatron-LM's multimodal examples): the status is not
        // the text's; before, $? read 0 and the srun branch was taken without a word.
        const std::string batch = "which srun\nBATCH=$((1-$?))\nif [[ $BATCH -eq 0 ]]; then TP=8; else TP=2; fi\n"
                                  "torchrun a.py $TP\n";
        QVERIFY(readerWarns(batch, "line 2: $? is the exit status of `which srun`, which the text does not give; kept as text"));
        QVERIFY(readerWarns(batch, "line 3: TP is set in a branch whose condition cannot be decided from the text"));
        // A test on a command substitution's output is not decided by comparing its text.
        const std::string host = "TP=2\nH=$(hostname)\nif [ \"$H\" = node0 ]; then TP=8; fi\ntorchrun a.py $TP\n";
        QCOMPARE(readerLaunches(host), std::string("<a.py><8>\n"));
        QVERIFY(readerWarns(host, "line 3: TP is set in a branch whose condition cannot be decided from the text"));
        // read from a file sets its names from input the text does not give; from a
        // here-string it reads the text's line (readFromTheText).
        const std::string readInput = "read -r -p 'size? ' A B < sizes.txt\nif [ \"$A\" = 1 ]; then TP=8; else TP=2; fi\n"
                                      "torchrun a.py $TP\n";
        const std::string readHere = "read -r -p 'size? ' A B <<< \"1 2\"\nif [ \"$A\" = 1 ]; then TP=8; else TP=2; fi\n"
                                     "torchrun a.py $TP\n";
        QCOMPARE(readerLaunches(readHere), bashLaunches(readHere));
        QCOMPARE(readerLaunches(readHere), std::string("<a.py><8>\n"));
        QCOMPARE(warningsWith(readInput, "read sets"),
                 std::vector<std::string>{"line 1: read sets A and B from input the text does not give; their values are kept "
                                          "as ${A} and ${B}"});
        QVERIFY(readerWarns(readInput, "line 2: TP is set in a branch whose condition cannot be decided from the text"));
    }

    void evalRunsItsText()
    {
        // eval joins its arguments with blanks and reads the result as commands where it stands
        // (manual 4.1): Megatron-LM's llama and qwen examples build `run_cmd="torchrun ..."` and
        // run `eval $run_cmd`. Each case is compared with bash.
        const std::vector<std::string> scripts = {
            "ARGS=\"--tensor-model-parallel-size 2 --num-layers 4\"\nrun_cmd=\"torchrun --nproc_per_node 8 pretrain_gpt.py "
            "$ARGS\"\neval $run_cmd\n",
            // a pipe and redirections in the text: the launch command is its first part
            "run_cmd=\"torchrun a.py --x 1\"\nrun_cmd=\"$run_cmd |& tee train.log\"\neval $run_cmd\n",
            "run_cmd=\"torchrun a.py --x 1\"\nrun_cmd=\"$run_cmd 2> train.log\"\neval ${run_cmd}\n",
            // quotes inside the value are read by eval, not by the assignment
            "ARGS=\"--data-path '/a b/c' --name \\\"x y\\\"\"\neval torchrun a.py $ARGS\ntorchrun b.py $ARGS\n",
            // assignments, exports, functions and nested evals
            "eval \"TP=4\"; eval 'export PP=2'\ntorchrun a.py $TP $PP\n",
            "eval 'f() { torchrun f.py \"$@\"; }'\nf 1 2\n",
            "eval eval torchrun x.py\n",
            "B=3\neval \"A=\\$B\"\ntorchrun a.py $A\n",
            "N=2\neval \"TP_$N=8\"\nV=TP_$N\ntorchrun a.py ${!V}\n",
            // nothing to run, and a text that does not parse: bash goes on after it
            "eval\neval \"\"\neval \"torchrun a.py 'open\"\ntorchrun b.py\n",
            // in a branch and a loop
            "for s in 1 2; do eval \"torchrun a.py --s $s\"; done\n",
            "if true; then eval \"if true; then torchrun a.py; fi\"; fi\n",
            "A=(1 2 3)\neval \"torchrun a.py ${A[@]}\"\n",
        };
        {
            const std::string difference = firstDifferenceFromBash(scripts);
            QVERIFY2(difference.empty(), difference.c_str());
        }
        QCOMPARE(readerLaunches(scripts[3]), std::string("<a.py><--data-path></a b/c><--name><x y>\n<b.py><--data-path><'/a><b/c'><--name><\"x><y\">\n"));
        QVERIFY(readerWarns(scripts[9], "line 3: eval's text does not parse"));
        // A text bash's parser refuses runs none of it; assignments before eval hold while it
        // runs; "--" ends eval's options.
        const std::vector<std::string> refused = {
            "A=0; eval 'A=1; fi'; torchrun a.py \"$A\"\n",
            "A=0; eval 'A=1; done'; torchrun a.py \"$A\"\n",
            "A=0; eval 'A=1; }'; torchrun a.py \"$A\"\n",
            "A=0; eval 'A=1; if true; then B=2'; torchrun a.py \"$A\"\n",
            "A=0; eval 'A=1 ;;'; torchrun a.py \"$A\"\n",
            "A=0; eval 'A=1; esac'; torchrun a.py \"$A\"\n",
            "A=0; eval 'A=1; then'; torchrun a.py \"$A\"\n",
            "A=0; eval 'A=1; { B=2'; torchrun a.py \"$A\"\n",
            "A=0; eval 'A=1; case x in'; torchrun a.py \"$A\"\n",
            "A=0; eval 'A=1; while true; do'; torchrun a.py \"$A\"\n",
            "A=0; eval 'A=1; [[ x'; torchrun a.py \"$A\"\n",
            "A=0; eval 'for x in 1; do A=$x'; torchrun a.py \"$A\"\n",
            "A=1; eval 'if then fi; A=2'; torchrun a.py \"$A\"\n",
            "A=0; eval 'A=1; f() {'; torchrun a.py \"$A\"\n",
            "A=0; eval 'f() { A=1; }; f; case y in y) B=1 ;; esac; if true; then C=1; fi'; torchrun a.py \"$A\" \"$B\" \"$C\"\n",
            "L=a,b,c; IFS=, eval 'arr=($L)'; torchrun a.py ${#arr[@]} \"${arr[0]}\"\n",
            "TP=4 eval 'torchrun a.py --tp $TP'; A=0; A=5 eval 'B=$A'; torchrun b.py \"$B\" \"$A\"\n",
            "eval -- 'A=1'; torchrun a.py \"$A\"\n",
            // bash runs the text's lines before the one that does not parse
            "A=0; eval $'A=1\\nfi'; torchrun a.py \"$A\"\n",
            "A=0; B=0; eval $'A=1\\nB=2; if true; then'; torchrun a.py \"$A\" \"$B\"\n",
        };
        {
            const std::string difference = firstDifferenceFromBash(refused);
            QVERIFY2(difference.empty(), difference.c_str());
        }
        QVERIFY(readerWarns(refused[0], "line 1: eval's text does not parse (unexpected fi)"));
        // An eval that runs itself twice doubles at each level: bounded, with a warning.
        QVERIFY(readerWarns("X='eval \"$X\" \"$X\"'; eval \"$X\"\ntorchrun a.py\n", "of eval texts, is not followed"));
        // A substitution a value kept is reported where the value was made, not again at eval.
        const std::string kept = "H=$(hostname)\nrun_cmd=\"torchrun a.py --host $H\"\neval $run_cmd\n";
        QCOMPARE(warningsWith(kept, "command substitution"),
                 std::vector<std::string>{"line 1: command substitution $(hostname) is not executed; kept as text"});
        QCOMPARE(readerLaunches(kept), std::string("<a.py><--host><$(hostname)>\n"));
        // The import takes the launch command from the text, at the line of the eval.
        const std::string tail = "--num-layers 4 --hidden-size 256 --num-attention-heads 4 --seq-length 512 "
                                 "--max-position-embeddings 512 --micro-batch-size 1 --global-batch-size 8 --bf16";
        const ImportedScript s = importMegatronScript(
            "TP=2\nrun_cmd=\"torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size $TP " + tail
                + "\"\nif [ \"$TEE\" = 0 ]; then\n  run_cmd=\"$run_cmd >& train.log\"\nelse\n  run_cmd=\"$run_cmd |& tee train.log\"\nfi\n"
                  "eval $run_cmd\n",
            "evaled.sh");
        QCOMPARE(s.command_line, 8);
        QCOMPARE(s.parallel.tp, 2);
        QVERIFY(!hasWarning(s, "eval"));
    }

    void readFromTheText()
    {
        // read with a here-string or a here-document reads the text's line (manual 3.6.6,
        // 3.6.7, 4.2), split on IFS; a `while read` loop over one runs a turn per line; words
        // split on IFS wherever the script sets it; printf -v formats. Compared with bash.
        const std::vector<std::string> scripts = {
            "CONFIG=\"4,2,8,1\"\nIFS=',' read -r TP PP EP CP <<< \"${CONFIG}\"\ntorchrun a.py $TP $PP $EP $CP \"$IFS\"\n",
            "IFS=',' read -ra A <<< \"1,,2,\"\ntorchrun a.py \"${A[@]}\" ${#A[@]}\n",
            "IFS=', ' read a b <<< \" 1 , 2 , 3 \"\ntorchrun a.py \"$a\" \"$b\"\n",
            "IFS=, read a b <<< \"1,2,\"\nIFS=, read c d <<< \"1,2,3,\"\ntorchrun a.py \"$a\" \"$b\" \"$c\" \"$d\"\n",
            "read a b <<< 'x\\ y z'\nread -r c d <<< 'x\\ y z'\ntorchrun a.py \"$a\" \"$b\" \"$c\" \"$d\"\n",
            "read <<< \"  keep  \"\ntorchrun a.py \"$REPLY\"\n",
            "read -r A <<< \"\"\nread -n 3 B <<< \"abcdef\"\nread -N 2 C <<< \"x\"\ntorchrun a.py \"$A\" \"$B\" \"$C\"\n",
            "read a b <<EOF\none two three\nEOF\ntorchrun a.py \"$a\" \"$b\"\n",
            "V=7\nread -r a <<EOF\n$V \"q\" \\$V\nEOF\nread -r b <<'EOF'\n$V\nEOF\ntorchrun a.py \"$a\" \"$b\"\n",
            "read -N 4 a b <<< \"x y z\"\nread -N 3 -a A <<< \"a b\"\ntorchrun a.py \"$a\" \"$b\" \"${A[@]}\"\n",
            "read -r -d '' A <<EOF\n${U:-\"d  e\"} ${U:-a\\\"b} \"q\" \\\"r\\\"\nEOF\ntorchrun a.py \"$A\"\n",
            "read -r -d '' ARGS <<EOF\n--num-layers 4\n--hidden-size 256\nEOF\ntorchrun a.py $ARGS\n",
            "read -r x <<< 'a' && TP=4 || TP=2\nread -r -d '' y <<< 'b' && PP=4 || PP=2\ntorchrun a.py $TP $PP\n",
            // a loop over the lines of a here-string or here-document
            "L=$'tp=2\\npp=4'\nARGS=\"\"\nwhile IFS='=' read -r K V; do ARGS+=\"--$K $V \"; done <<< \"$L\"\ntorchrun a.py $ARGS\n",
            "N=0\nwhile read -r line; do N=$((N+1)); torchrun a.py \"$line\" $N; done <<EOF\nfirst line\n  second\nEOF\n",
            "while read -r a; do while read -r b; do torchrun a.py $a $b; done <<< \"in\"; done <<< $'1\\n2'\n",
            // field splitting on the script's IFS
            "IFS=,; L=\"a,b,,c,\"; set -- $L; IFS=' '; torchrun a.py $# \"$@\"\n",
            "IFS=$'\\n'; L=\"a b\nc\"; torchrun a.py $L\n",
            "IFS=; L=\"a b\"; torchrun a.py $L\n",
            "unset IFS; L=\" a  b \"; torchrun a.py $L\n",
            "IFS=', '; L=\"a , b,c\"; torchrun a.py $L\n",
            "OLD=$IFS; IFS=:; P=\"1:2\"; for x in $P; do torchrun a.py $x; done; IFS=$OLD; torchrun b.py $P\n",
            // lists on IFS: each element split on its own, joined by IFS's first character
            // (the * forms) or a blank (the @ forms) where nothing is split
            "A=(x y z); IFS=,; R=${A[*]}; S=${A[@]}; set -- p q; T=$*; U=$@\ncase $* in \"p,q\") C=yes ;; *) C=no ;; esac\n"
            "IFS=' '\ntorchrun a.py \"$R\" \"$S\" \"$T\" \"$U\" \"$C\"\n",
            "IFS=,; set -- \"a b\" \"\" \",c\"; for x in $*; do torchrun a.py \"$x\"; done; torchrun b.py $@\n",
            "A=(\"a b\" \"\" c); IFS=; torchrun a.py ${A[@]} ${A[*]} \"${A[*]}\"; R=${A[*]}; torchrun b.py \"$R\"\n",
            "A=(\" a \" \"\" \"b  c\"); torchrun a.py ${A[@]} ${A[*]:1} ${A[@]/b/x}; IFS=', '; torchrun b.py ${A[*]} \"${A[*]}\"\n",
            "set -- x \"\" \"y z\"; unset IFS; torchrun a.py $* ${@:2}; R=$*; S=${@:2}; torchrun b.py \"$R\" \"$S\"\n",
            "IFS=,; arr=(--tp 2 --pp 2); torchrun a.py ${arr[@]}; arr=(a,b \"c,d\"); torchrun b.py ${arr[@]} ${arr[@]:0:1}\n",
            "IFS=,; arr=(\"a b\" c); torchrun a.py ${arr[@]/#/-}; IFS=; set -- \"p q\" r; torchrun b.py $* $@ ${@:1}\n",
            "X=\"a}b,c{d\"; IFS=$SEP; torchrun a.py $X\n",
            // the quoted parts of an operator's word stay whole
            "X=; torchrun a.py ${X:-\"a b\"} ${X:-a\" \"b} ${X:-'c d'} ${X:-$'e f'} ${X:-g\\ h} ${X:-i j}\n",
            "A=\"${U:-\"d  e\"}\"; torchrun a.py \"$A\" \"${U:-\"x  y\"}\" \"${U:-'s q'}\" \"${U:-a\\\"b}\" \"${U:-\"$A\"}\"\n",
            "IFS=-; X=; Y=p-q; torchrun a.py ${X:-\"a-b\"} ${X:-a\"-\"b} ${Y:+\"$Y\"} ${X:-$Y}\n",
            // a loop over 300 lines of a here-document runs 300 turns
            "S=x; for a in 0 1 2; do for b in 0 1 2 3 4 5 6 7 8 9; do for c in 0 1 2 3 4 5 6 7 8 9; do S+=$'\\nx'; done; done; done\n"
            "N=0\nwhile read -r L; do N=$((N+1)); done <<< \"$S\"\ntorchrun a.py $N\n",
            // descriptors other than standard input, and what read refuses
            "REPLY=k; T=t; V=v; read A-B <<< x; read -t 0 T <<< val; printf -v V; torchrun a.py \"$REPLY\" \"$T\" \"$V\"\n",
            // printf -v
            "printf -v GBS '%d' 256\nprintf -v NAME 'run_%03d_%s' 7 tp2\nprintf -v H '%x-%o-%5.2f' 255 8 3.14159\n"
            "torchrun a.py $GBS $NAME \"$H\"\n",
            "printf -v L '%s,' a b c\nprintf -v E '%b' 'x\\ty'\nprintf -v P '%-4s|' ab\ntorchrun a.py \"${L%,}\" \"$E\" \"$P\"\n",
            "printf -v N '%d' 010\nprintf -v C '%d' \"'A\"\nprintf -v M '%s=%s ' k\ntorchrun a.py $N $C \"$M\"\n",
        };
        {
            const std::string difference = firstDifferenceFromBash(scripts);
            QVERIFY2(difference.empty(), difference.c_str());
        }
        QCOMPARE(readerLaunches(scripts[0]), std::string("<a.py><4><2><8><1>< \t\n>\n"));
        QCOMPARE(readerLaunches(scripts[11]), std::string("<a.py><--num-layers><4><--hidden-size><256>\n"));
        QCOMPARE(readerLaunches(scripts[13]), std::string("<a.py><--tp><2><--pp><4>\n"));
        // Input the text does not give (a file, a pipe, another descriptor, a number printf
        // cannot read) stays unknown; bash would read the terminal there.
        QVERIFY(readerWarns("read -r y 3<<< val\ntorchrun a.py $y\n", "read sets y from input"));
        QVERIFY(readerWarns("read -u 3 z <<< val\ntorchrun a.py $z\n", "read sets z from input"));
        QVERIFY(readerWarns("while read -r x; do O=$x; done 3<<< $'a\\nb'\ntorchrun a.py $O\n", "read sets x from input"));
        QVERIFY(readerWarns("while read -r a; do torchrun a.py $a; done < hosts.txt\n", "read sets a from input"));
        QVERIFY(readerWarns("echo 1 | while read -r a; do torchrun a.py $a; done\n", "read sets a from input"));
        QVERIFY(readerWarns("while read -r a; do torchrun a.py $a; done <<< \"$(hostname)\"\n", "read sets a from input"));
        QVERIFY(readerWarns("read -r a <<EOF\n$NODES\nEOF\ntorchrun a.py $a\n", "read sets a from input"));
        QVERIFY(readerWarns("while read -r a; do cat | while read -r b; do torchrun $b; done; done <<< x\n", "read sets b from input"));
        QVERIFY(readerWarns("printf -v N '%d' \"$(nproc)\"\ntorchrun a.py $N\n", "printf -v N: the format or its arguments are not "
                                                                               "evaluated here; N is kept as ${N}"));
    }
};

QTEST_APPLESS_MAIN(TestScriptImport)
#include "TestScriptImport.moc"
