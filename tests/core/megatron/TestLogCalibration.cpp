// Log calibration: a Mixtral 8x7B run on 4 x 8 H800 logged in Megatron-LM's format
// (tests/data/megatron/train_mixtral_h800.log); the calibrated profile moves the predicted
// iteration time from the catalog default to within 2% of the logged one.

#include "MegatronTestUtil.h"

#include "cost/CostModel.h"
#include "megatron/LogCalibration.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace hapmoe;

class TestLogCalibration : public QObject {
    Q_OBJECT

private slots:
    void parseLog()
    {
        const MegatronLog log = parseMegatronLog(readTextFile(test::dataFile("train_mixtral_h800.log")), "train_mixtral_h800.log");
        QCOMPARE(log.intervals.size(), std::size_t(5));
        QCOMPARE(log.intervals.front().iteration, 1LL);
        QCOMPARE(log.intervals.front().elapsed_ms, 14876.2);
        QCOMPARE(log.intervals.back().iteration, 5LL);
        QCOMPARE(log.memory.size(), std::size_t(4));
        QCOMPARE(log.memory[1].rank, 8);
        QCOMPARE(log.memory[1].max_reserved_mb, 40960.0);
        QCOMPARE(log.memory[1].max_allocated_mb, 39512.66);
        QCOMPARE(log.timers.at("forward-backward").first, 10101.23);
        QCOMPARE(log.timers.at("optimizer").second, 99.02);
        QCOMPARE(log.router_tokens.size(), std::size_t(2));
        QCOMPARE(log.router_tokens.at(1).front(), 1500.0);
        QVERIFY_THROWS_EXCEPTION(InputError, parseMegatronLog("no iterations here\n", "empty.log"));
        // A timer is (min, max) over the ranks in ms: not-a-number, negative or reversed pairs
        // are not timer lines.
        const std::string text = readTextFile(test::dataFile("train_mixtral_h800.log"))
            + "    broken-a ......................................: (nan, -inf)\n"
            + "    broken-b ......................................: (-1.0, 2.0)\n"
            + "    broken-c ......................................: (5.0, 2.0)\n";
        const MegatronLog odd = parseMegatronLog(text, "odd.log");
        QCOMPARE(odd.timers.count("broken-a") + odd.timers.count("broken-b") + odd.timers.count("broken-c"), std::size_t(0));
        QCOMPARE(odd.timers.size(), log.timers.size());
    }

    void calibrateToLoggedTime()
    {
        const PlanDocument doc = readPlan(readTextFile(test::dataFile("mixtral_h800_plan.json")), "mixtral_h800_plan.json");
        const MegatronLog log = parseMegatronLog(readTextFile(test::dataFile("train_mixtral_h800.log")), "train_mixtral_h800.log");
        const CalibrationResult r = calibrateFromLog(log, doc, DeviceCatalog::builtin(), "train_mixtral_h800.log");
        // Intervals 2-5 (the first includes start-up): 10234.1, 10236.5, 10231.9, 10235.3 ms, of
        // median (10234.1 + 10235.3) / 2 = 10234.7 ms.
        QCOMPARE(r.intervals_used, 4);
        QVERIFY(std::abs(r.measured_iteration_s - 10.2347) < 1e-9);
        QVERIFY(r.fit_failure.empty());
        QCOMPARE(r.table_scale, 1.0);
        // Router counts: layer 0 max 1300 of mean 1000, layer 1 max 1500 of mean 1000 -> rho (1.3 + 1.5) / 2.
        QVERIFY(r.rho.has_value());
        QVERIFY(std::abs(*r.rho - 1.4) < 1e-12);
        QCOMPARE(*r.profile.router_imbalance, *r.rho);
        const double before = std::abs(r.predicted_before_s - r.measured_iteration_s) / r.measured_iteration_s;
        const double after = std::abs(r.predicted_after_s - r.measured_iteration_s) / r.measured_iteration_s;
        qInfo("measured %.1f ms, predicted before %.1f ms (%.1f%%), after %.1f ms (%.3f%%), efficiency x%.3f",
              r.measured_iteration_s * 1000, r.predicted_before_s * 1000, 100 * before, r.predicted_after_s * 1000, 100 * after,
              r.efficiency_scale);
        QVERIFY(after < 0.02);
        QVERIFY(after < before);
        QVERIFY(r.profile.device_efficiency.count("H800"));
        QVERIFY(r.profile.device_efficiency.at("H800") > 0 && r.profile.device_efficiency.at("H800") <= 1.0);
        // What the prediction before used: the catalog's H800 figure, H100's MAMF 0.803
        // (resources/devices.json), x 253.7 / 271.2 (kLargeGemmOverMamf) = 0.7512; the fitted
        // efficiency is the scale times the catalog figure.
        QCOMPARE(r.efficiency_before.size(), std::size_t(1));
        QVERIFY(std::abs(r.efficiency_before.at("H800") - 0.803 * 253.7 / 271.2) < 1e-12);
        QVERIFY(std::abs(r.profile.device_efficiency.at("H800") - r.efficiency_scale * 0.803) < 1e-12);

        // Re-estimating with the written and re-read profile lands on the logged time too.
        const Profile reread = readProfile(writeProfile(r.profile), "calibrated.json");
        const CostModel cost(doc.model, doc.cluster, DeviceCatalog::builtin(), &reread);
        const Prediction p = cost.estimate(doc.plan);
        QVERIFY(std::abs(p.iteration_time_s - r.measured_iteration_s) / r.measured_iteration_s < 0.02);
        QVERIFY(p.used_profile);

        // Memory: one H800 overhead for the four stages, the largest any of them needs, so that
        // no stage is predicted below its logged max reserved (43520, 40960, 38912, 37888 MB)
        // and the stage that needs the most is predicted exactly.
        QCOMPARE(r.memory.size(), std::size_t(4));
        QCOMPARE(r.profile.memory.size(), std::size_t(1));
        const std::vector<double> loggedMb = {43520.0, 40960.0, 38912.0, 37888.0};
        int exact = 0;
        for (const StageMemoryCheck& m : r.memory) {
            QVERIFY(std::abs(m.measured_gib - loggedMb[static_cast<std::size_t>(m.stage)] / 1024.0) < 1e-9);
            QVERIFY2(m.predicted_after_gib >= m.measured_gib - 1e-9,
                     qPrintable(QStringLiteral("stage %1: %2 < %3").arg(m.stage).arg(m.predicted_after_gib).arg(m.measured_gib)));
            exact += std::abs(m.predicted_after_gib - m.measured_gib) < 1e-9 ? 1 : 0;
        }
        QCOMPARE(exact, 1);
        // "Before" is the plan's memory as estimated without the calibration: the router
        // imbalance the log gives (1.4 against the model's 1.2) is not in it yet.
        const Prediction uncalibrated = CostModel(doc.model, doc.cluster, DeviceCatalog::builtin()).estimate(doc.plan);
        for (const StageMemoryCheck& m : r.memory)
            QCOMPARE(m.predicted_before_gib, uncalibrated.stages[static_cast<std::size_t>(m.stage)].memory.total() / (1024.0 * 1024.0 * 1024.0));

        // A stage logged far below its prediction (20 GiB for stage 0): the overhead is still
        // what the others need, the low stage is predicted above its log, and a note gives the
        // spread; nothing is wrong with the log.
        std::string low = readTextFile(test::dataFile("train_mixtral_h800.log"));
        const std::string rank0 = "reserved: 43520.00 | max reserved: 43520.00";
        QVERIFY(low.find(rank0) != std::string::npos);
        low.replace(low.find(rank0), rank0.size(), "reserved: 20480.00 | max reserved: 20480.00");
        const CalibrationResult spread = calibrateFromLog(parseMegatronLog(low, "low.log"), doc, DeviceCatalog::builtin(), "low.log");
        for (const StageMemoryCheck& m : spread.memory)
            QVERIFY(m.predicted_after_gib >= m.measured_gib - 1e-9);
        QVERIFY(spread.memory.front().predicted_after_gib > spread.memory.front().measured_gib + 5);
        QVERIFY(spread.warnings.empty());
        QVERIFY(std::any_of(spread.notes.begin(), spread.notes.end(), [](const std::string& n) {
            return n.find("the other H800 stages are then predicted up to") != std::string::npos;
        }));
        // Every stage logged below its prediction: the overhead stops at 0, and that is said.
        std::string lower = readTextFile(test::dataFile("train_mixtral_h800.log"));
        for (const char* mb : {"43520.00", "40960.00", "38912.00", "37888.00"})
            for (std::size_t at = lower.find(mb); at != std::string::npos; at = lower.find(mb))
                lower.replace(at, 8, "20480.00");
        const CalibrationResult under = calibrateFromLog(parseMegatronLog(lower, "under.log"), doc, DeviceCatalog::builtin(), "under.log");
        QCOMPARE(under.profile.memory.front().fixed_overhead_gib, 0.0);
        QVERIFY(std::any_of(under.warnings.begin(), under.warnings.end(), [](const std::string& w) {
            return w.find("the model counts more memory on every H800 stage than the log reports") != std::string::npos;
        }));
        // Figures in GB where the log says MB (42.50 for 43520): below half the stage's
        // weights, gradients and optimizer states, refused with the line.
        std::string gb = readTextFile(test::dataFile("train_mixtral_h800.log"));
        gb.replace(gb.find(rank0), rank0.size(), "reserved: 42.50 | max reserved: 42.50");
        try {
            calibrateFromLog(parseMegatronLog(gb, "gb.log"), doc, DeviceCatalog::builtin(), "gb.log");
            QFAIL("a memory figure below the model states was taken");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("max reserved (MB): expected at least") != std::string::npos
                         && std::string(e.what()).find("got 42.5 (MB") != std::string::npos,
                     e.what());
        }
    }

    void calibrateWarnsOfImplausibleFits()
    {
        // The test log's steady iterations take 10.23 s, which the model reaches at 0.784 x the
        // catalog's measured maximum achievable GEMM rate (MAMF) of H800: plausible, no warning.
        const PlanDocument doc = readPlan(readTextFile(test::dataFile("mixtral_h800_plan.json")), "mixtral_h800_plan.json");
        const std::string text = readTextFile(test::dataFile("train_mixtral_h800.log"));
        const CalibrationResult plain = calibrateFromLog(parseMegatronLog(text, "t.log"), doc, DeviceCatalog::builtin(), "t.log");
        QVERIFY(plain.efficiency_scale < 1);
        for (const std::string& w : plain.warnings)
            QVERIFY2(w.find("GEMM rate") == std::string::npos, w.c_str());
        // The same run logged 30 % faster (10234.1 ms as 7163.9, ...): the fit needs GEMMs
        // above the measured maximum, which the warning says cannot be.
        std::string faster = text;
        for (const auto& [from, to] : {std::pair{"10234.1", "7163.9"}, {"10236.5", "7165.6"}, {"10231.9", "7162.3"},
                                       {"10235.3", "7164.7"}}) {
            QVERIFY(faster.find(from) != std::string::npos);
            faster.replace(faster.find(from), 7, to);
        }
        const CalibrationResult fast = calibrateFromLog(parseMegatronLog(faster, "f.log"), doc, DeviceCatalog::builtin(), "f.log");
        QVERIFY2(fast.fit_failure.empty(), fast.fit_failure.c_str());
        QVERIFY(fast.efficiency_scale > 1.02);
        QVERIFY(std::any_of(fast.warnings.begin(), fast.warnings.end(), [](const std::string& w) {
            return w.find("the fitted efficiency of H800") != std::string::npos
                && w.find("x the catalog's measured maximum achievable GEMM rate (0.803 of peak)") != std::string::npos;
        }));
        // One interval only (iteration 1, with start-up): used, and said to be too slow.
        std::string one;
        std::istringstream lines(text);
        for (std::string line; std::getline(lines, line);)
            if (line.find("elapsed time per iteration") == std::string::npos || line.find("iteration        1/") != std::string::npos)
                one += line + "\n";
        const CalibrationResult single = calibrateFromLog(parseMegatronLog(one, "one.log"), doc, DeviceCatalog::builtin(), "one.log");
        QCOMPARE(single.intervals_used, 1);
        QVERIFY(std::abs(single.measured_iteration_s - 14.8762) < 1e-9);
        QVERIFY(std::any_of(single.warnings.begin(), single.warnings.end(), [](const std::string& w) {
            return w.rfind("one.log: only one logging interval: it includes start-up work", 0) == 0;
        }));
    }

    void runSwitchesFromTheArguments()
    {
        // Megatron-LM prints its arguments after validate_args ("  overlap_grad_reduce ....
        // False"). The profile cannot carry them and "hapmoe estimate --plan" costs the plan
        // with its own (here the cost model's defaults, data-parallel overlap on): the run is
        // costed as estimate will cost it, so that the profile reproduces the log there, and a
        // warning names the switches the run had otherwise.
        const PlanDocument doc = readPlan(readTextFile(test::dataFile("mixtral_h800_plan.json")), "mixtral_h800_plan.json");
        const std::string logText = readTextFile(test::dataFile("train_mixtral_h800.log"));
        const std::string dump = "------------------------ arguments ------------------------\n"
                                 "  overlap_grad_reduce ............................. False\n"
                                 "  overlap_p2p_comm ................................ False\n"
                                 "  overlap_param_gather ............................ False\n"
                                 "  tp_comm_overlap ................................. False\n"
                                 "  world_size ...................................... 32\n"
                                 "-------------------- end of arguments ---------------------\n";
        const MegatronLog plain = parseMegatronLog(logText, "train.log");
        QVERIFY(!plain.switches.grad_reduce && !plain.switches.tp_comm);
        const MegatronLog log = parseMegatronLog(dump + logText, "train.log");
        QCOMPARE(log.switches.grad_reduce, std::optional<bool>(false));
        QCOMPARE(log.switches.param_gather, std::optional<bool>(false));
        QCOMPARE(log.switches.tp_comm, std::optional<bool>(false));
        QCOMPARE(log.switches.p2p, std::optional<bool>(false));
        QCOMPARE(log.switches.line, 2);
        QCOMPARE(log.sizes.world, 32);

        const CalibrationResult asPlanned = calibrateFromLog(plain, doc, DeviceCatalog::builtin(), "train.log");
        const CalibrationResult asRun = calibrateFromLog(log, doc, DeviceCatalog::builtin(), "train.log");
        QCOMPARE(asRun.predicted_before_s, asPlanned.predicted_before_s);
        QCOMPARE(asRun.efficiency_scale, asPlanned.efficiency_scale);
        QVERIFY(asPlanned.warnings.empty());
        // Plain 1F1B: Megatron-LM prints overlap_p2p_comm False, which changes nothing.
        QCOMPARE(asRun.warnings, std::vector<std::string>{
                     "train.log: line 2: the run's arguments say it ran without --overlap-grad-reduce, without --overlap-param-gather, unlike "
                     "the cost model's defaults, which hapmoe estimate uses for this plan: the fit follows the plan's switches, so "
                     "the efficiency also absorbs the communication they change; give the plan the run's switches for an efficiency "
                     "of the devices alone"});
        // What estimate computes for the plan with the written profile is the logged time.
        const CostModel cost(doc.model, doc.cluster, DeviceCatalog::builtin(), &asRun.profile);
        QVERIFY(std::abs(cost.estimate(doc.plan).iteration_time_s - asRun.measured_iteration_s) < 1e-3 * asRun.measured_iteration_s);

        // FP8: --fp8-format's dest is "fp8", printed as its format or None. A run in FP8 against
        // a bf16 plan is said (its GEMM rate would go into the efficiency); None agrees.
        const std::string fp8Dump = "------------------------ arguments ------------------------\n"
                                    "  fp8 ............................................. hybrid\n"
                                    "  fp8_amax_history_len ............................ 1024\n"
                                    "-------------------- end of arguments ---------------------\n";
        const MegatronLog fp8Log = parseMegatronLog(fp8Dump + logText, "train.log");
        QCOMPARE(fp8Log.switches.fp8, std::optional<std::string>("hybrid"));
        QCOMPARE(fp8Log.switches.fp8_line, 2);
        const CalibrationResult fp8Run = calibrateFromLog(fp8Log, doc, DeviceCatalog::builtin(), "train.log");
        QCOMPARE(fp8Run.warnings, std::vector<std::string>{
                     "train.log: line 2: the run's arguments say it ran with --fp8-format hybrid, unlike the plan's model (no FP8): the "
                     "fitted efficiency then absorbs what FP8 changes; set the model's training.fp8_format to the run's"});
        std::string noneDump = fp8Dump;
        noneDump.replace(noneDump.find("hybrid"), 6, "None");
        QVERIFY(calibrateFromLog(parseMegatronLog(noneDump + logText, "train.log"), doc, DeviceCatalog::builtin(), "train.log")
                    .warnings.empty());
    }

    void parseRefusesImpossibleValues()
    {
        // An iteration line with a value no run has is an error at that line, not "not a
        // Megatron-LM training log".
        const std::string head = "using world size: 32, data-parallel size: 8, context-parallel size: 1, "
                                 "tensor-model-parallel size: 1, pipeline-model-parallel size: 4\ntraining ...\n";
        for (const char* value : {"0.0", "-5", "nan", "1e308"}) {
            const std::string text = head + " iteration        1/     500 | elapsed time per iteration (ms): " + value
                                   + " | global batch size:   256 |\n";
            try {
                parseMegatronLog(text, "bad.log");
                QFAIL(value);
            } catch (const InputError& e) {
                QCOMPARE(e.file(), std::string("bad.log"));
                QCOMPARE(e.where(), std::string("line 3"));
                QVERIFY2(e.detail().find("expected a positive number of milliseconds") != std::string::npos, e.what());
                QVERIFY2(e.detail().find(std::string("got \"") + value + "\"") != std::string::npos, e.what());
            }
        }
        try {
            parseMegatronLog(head + " iteration 2/ 5 | elapsed time per iteration (ms): 100.0 |\n"
                                    "[Rank 0] (after 2 iterations) memory (MB) | allocated: 1.0 | max allocated: nan | "
                                    "reserved: 2.0 | max reserved: 2.0\n",
                             "mem.log");
            QFAIL("a memory figure that is not a number must be refused");
        } catch (const InputError& e) {
            QCOMPARE(e.where(), std::string("line 4"));
            QVERIFY2(e.detail().rfind("max allocated (MB): expected a number >= 0", 0) == 0, e.what());
        }
        // The sizes the run states: validate_args' line and the arguments dump.
        const MegatronLog log = parseMegatronLog(readTextFile(test::dataFile("train_mixtral_h800.log")), "train_mixtral_h800.log");
        QCOMPARE(log.sizes.world, 32);
        QCOMPARE(log.sizes.dp, 8);
        QCOMPARE(log.sizes.tp, 1);
        QCOMPARE(log.sizes.pp, 4);
        QCOMPARE(log.sizes.world_line, 1);
        const MegatronLog dump = parseMegatronLog("  world_size ...................................... 16\n"
                                                  "  expert_model_parallel_size ...................... 4\n"
                                                  " iteration 1/ 5 | elapsed time per iteration (ms): 100.0 |\n",
                                                  "dump.log");
        QCOMPARE(dump.sizes.world, 16);
        QCOMPARE(dump.sizes.ep, 4);
        QCOMPARE(dump.sizes.tp, 0);
        // A stated size that is no count is refused at its line: skipping it would skip the
        // check of the run against the plan without a word.
        for (const auto& [line, detail] : std::vector<std::pair<std::string, std::string>>{
                 {"using world size: 2147483680, data-parallel size: 8", "world size: expected a whole number from 1 to 1000000000, got \"2147483680\""},
                 {"using world size: 32, tensor-model-parallel size: 0", "tensor-model-parallel size: expected a whole number from 1 to 1000000000, got \"0\""},
                 {"  pipeline_model_parallel_size .................... 2.5", "pipeline_model_parallel_size: expected a whole number from 1 to 1000000000, got \"2.5\""}}) {
            try {
                parseMegatronLog(line + "\n iteration 1/ 5 | elapsed time per iteration (ms): 100.0 |\n", "sizes.log");
                QFAIL(line.c_str());
            } catch (const InputError& e) {
                QCOMPARE(e.where(), std::string("line 1"));
                QCOMPARE(e.detail(), detail);
            }
        }
        // Another format's line (Megatron-LM v1, DeepSpeed) is no size of this one: passed over.
        const MegatronLog older = parseMegatronLog("using world size: 32 and model-parallel size: 1\n"
                                                   " iteration 1/ 5 | elapsed time per iteration (ms): 100.0 |\n",
                                                   "v1.log");
        QCOMPARE(older.sizes.world, 0);
        // Numbers no run has where a count is read: an iteration number is not taken (it
        // would not even convert to an integer); a layer index is refused at its line, since
        // leaving its counts out would take the imbalance from the other layers alone.
        const MegatronLog huge = parseMegatronLog(" iteration 6.7e65/ 5 | elapsed time per iteration (ms): 100.0 |\n"
                                                  " layer 2 tokens per expert: 10 20 30\n",
                                                  "huge.log");
        QCOMPARE(huge.intervals.size(), std::size_t(1));
        QCOMPARE(huge.intervals.front().iteration, 0LL);
        QCOMPARE(huge.router_tokens.size(), std::size_t(1));
        QVERIFY(huge.router_tokens.count(2));
        for (const char* layer : {"1e300", "-1", "1.5"}) {
            try {
                parseMegatronLog(" layer 2 tokens per expert: 10 20 30\n layer " + std::string(layer) + " tokens per expert: 10 20 30\n",
                                 "layer.log");
                QFAIL("a layer index no model has must be refused");
            } catch (const InputError& e) {
                QCOMPARE(e.where(), std::string("line 2"));
                QVERIFY2(std::string(e.detail()).rfind("tokens per expert: expected a layer index (a whole number from 0), got ", 0) == 0,
                         e.what());
            }
        }
    }

    void calibrateScalesComputeTables()
    {
        // The profiler's table for H800 at TP 1, CP 1 and the plan's 4096 tokens (MBS 1 x
        // sequence 4096): 12 / 24 ms per layer forward / backward, FFN 8 / 16 ms; slower than
        // the logged run by far. The fit scales the table with the efficiency, so that the
        // written profile reproduces the logged 10234.7 ms (median of intervals 2-5).
        const PlanDocument doc = readPlan(readTextFile(test::dataFile("mixtral_h800_plan.json")), "mixtral_h800_plan.json");
        const std::string text = readTextFile(test::dataFile("train_mixtral_h800.log"));
        Profile base;
        base.compute.push_back({"H800", 1, 1, 4096, 0.012, 0.024, 0.008, 0.016});
        const CalibrationResult r = calibrateFromLog(parseMegatronLog(text, "train.log"), doc, DeviceCatalog::builtin(), "train.log", &base);
        QVERIFY2(r.fit_failure.empty(), r.fit_failure.c_str());
        QVERIFY(r.predicted_before_s > 2 * r.measured_iteration_s);
        // One scale s: the table's times / s, the efficiency s x the catalog default (capped at 1).
        QVERIFY(std::abs(r.table_scale * r.efficiency_scale - 1) < 1e-12);
        QCOMPARE(r.profile.compute.size(), std::size_t(1));
        const ComputeEntry& e = r.profile.compute.front();
        QVERIFY(std::abs(e.dense_layer_fwd_s / (0.012 * r.table_scale) - 1) < 1e-12);
        QVERIFY(std::abs(e.ffn_bwd_s / (0.016 * r.table_scale) - 1) < 1e-12);
        QCOMPARE(r.profile.device_efficiency.at("H800"), 1.0);
        QCOMPARE(r.warnings.size(), std::size_t(1));
        QVERIFY2(r.warnings.front().rfind("the device efficiency of H800 stops at its peak (1.000) and the compute tables carry the rest "
                                          "of the fit (their times x0.",
                                          0)
                     == 0,
                 r.warnings.front().c_str());
        const Profile reread = readProfile(writeProfile(r.profile), "calibrated.json");
        const CostModel cost(doc.model, doc.cluster, DeviceCatalog::builtin(), &reread);
        QVERIFY(std::abs(cost.estimate(doc.plan).iteration_time_s - 10.2347) < 1e-3 * 10.2347);

        // 80 000 000 ms (22 h) per iteration: slower than the model at 1/500 of the catalog's
        // efficiency; the failure is said, not written as an efficiency at the bound.
        std::string slow = text;
        for (const char* v : {"(ms): 10234.1", "(ms): 10236.5", "(ms): 10231.9", "(ms): 10235.3"})
            slow.replace(slow.find(v), std::string(v).size(), "(ms): 80000000.0");
        const CalibrationResult failed = calibrateFromLog(parseMegatronLog(slow, "slow.log"), doc, DeviceCatalog::builtin(), "slow.log");
        QCOMPARE(failed.fit_failure, std::string("the run is slower than the model allows at 1/500 of the default efficiency"));

        // A device type of the project's own with a catalog efficiency of 0.002 (valid, if
        // odd): the fit still reaches down to 1/500 of it, so a log 1.2 x slower than the
        // prediction calibrates to about 0.002 / 1.2, where the search had stopped at 1/500
        // of peak (here the catalog figure itself) and called the run too slow.
        DeviceCatalog slowCatalog = DeviceCatalog::builtin();
        DeviceType slowH800 = *slowCatalog.find("H800");
        slowH800.default_efficiency = 0.002;
        slowCatalog.merge(DeviceCatalog({slowH800}));
        const double predicted = CostModel(doc.model, doc.cluster, slowCatalog).estimate(doc.plan).iteration_time_s;
        std::string slower = text;
        char logged[64];
        std::snprintf(logged, sizeof logged, "(ms): %.1f", 1.2 * predicted * 1000);
        for (const char* v : {"(ms): 10234.1", "(ms): 10236.5", "(ms): 10231.9", "(ms): 10235.3"})
            slower.replace(slower.find(v), std::string(v).size(), logged);
        const CalibrationResult odd = calibrateFromLog(parseMegatronLog(slower, "slower.log"), doc, slowCatalog, "slower.log");
        QVERIFY2(odd.fit_failure.empty(), odd.fit_failure.c_str());
        QVERIFY(odd.time_matched);
        QVERIFY2(odd.efficiency_scale > 0.7 && odd.efficiency_scale < 0.9, qPrintable(QString::number(odd.efficiency_scale)));
        // 2.5 x slower would need 0.0008, below the 0.001 of peak a profile may hold: a failed
        // fit that says so (exit 1 in the CLI), not a profile refused as invalid.
        std::string slowest = text;
        std::snprintf(logged, sizeof logged, "(ms): %.1f", 2.5 * predicted * 1000);
        for (const char* v : {"(ms): 10234.1", "(ms): 10236.5", "(ms): 10231.9", "(ms): 10235.3"})
            slowest.replace(slowest.find(v), std::string(v).size(), logged);
        const CalibrationResult floor = calibrateFromLog(parseMegatronLog(slowest, "slowest.log"), doc, slowCatalog, "slowest.log");
        QCOMPARE(floor.fit_failure,
                 std::string("the run is slower than the model allows at 0.001 of peak, the least efficiency a profile may hold"));
    }

    void calibrateWarnsOfWhatTheLogContradicts()
    {
        const PlanDocument doc = readPlan(readTextFile(test::dataFile("mixtral_h800_plan.json")), "mixtral_h800_plan.json");
        const std::string text = readTextFile(test::dataFile("train_mixtral_h800.log"));
        auto replaced = [&](const std::string& from, const std::string& to) {
            std::string t = text;
            t.replace(t.find(from), from.size(), to);
            return t;
        };
        auto warned = [](const CalibrationResult& r, const std::string& start) {
            return std::any_of(r.warnings.begin(), r.warnings.end(), [&](const std::string& w) { return w.find(start) != std::string::npos; });
        };
        // The test log as it is: its 46.70 billion parameters are Mixtral 8x7B's (the plan's
        // model counts 46.7e9, docs/cost-model.md section 1), its forward-backward timer
        // (10,105.9 ms) is within its 10,234.7 ms iteration, and every stage reports memory.
        const CalibrationResult plain = calibrateFromLog(parseMegatronLog(text, "t.log"), doc, DeviceCatalog::builtin(), "t.log");
        QVERIFY2(plain.warnings.empty(), plain.warnings.empty() ? "" : plain.warnings.front().c_str());
        for (const StageMemoryCheck& m : plain.memory)
            QCOMPARE(m.capacity_gib, 80.0);   // H800, no headroom in the plan

        // Another model's count (LLaMA-2-7B's 6.74) on line 4.
        const CalibrationResult other = calibrateFromLog(
            parseMegatronLog(replaced("parameters in billions: 46.70", "parameters in billions: 6.74"), "o.log"), doc,
            DeviceCatalog::builtin(), "o.log");
        QVERIFY(warned(other, "line 4: the run reports 6.740 billion parameters, the plan's model"));
        // A forward-backward timer longer than the iteration: another run's timers.
        const CalibrationResult timers = calibrateFromLog(
            parseMegatronLog(replaced("(10101.23, 10105.87)", "(20101.23, 20105.87)"), "f.log"), doc, DeviceCatalog::builtin(), "f.log");
        QVERIFY(warned(timers, "the forward-backward timer (up to 20105.9 ms"));
        // A run 10 x slower than the model at the catalog's GEMM rate: a scale far below 1.
        std::string slow = text;
        for (const char* v : {"(ms): 10234.1", "(ms): 10236.5", "(ms): 10231.9", "(ms): 10235.3"})
            slow.replace(slow.find(v), std::string(v).size(), "(ms): 78000.0");
        for (const char* v : {"(10101.23, 10105.87)"})
            slow.replace(slow.find(v), std::string(v).size(), "(77000.00, 77100.00)");
        const CalibrationResult tenfold = calibrateFromLog(parseMegatronLog(slow, "s.log"), doc, DeviceCatalog::builtin(), "s.log");
        QVERIFY2(tenfold.fit_failure.empty(), tenfold.fit_failure.c_str());
        QVERIFY(tenfold.efficiency_scale < 0.3);
        QVERIFY(warned(tenfold, "a run this slow has something the plan does not"));

        // Without rank 24's report, stage 3 is said to take the H800 overhead fitted on the
        // other stages, not measured on it.
        std::string noRank24 = text;
        const std::size_t r24 = noRank24.find("[Rank 24]");
        noRank24.erase(r24, noRank24.find('\n', r24) + 1 - r24);
        const CalibrationResult partial = calibrateFromLog(parseMegatronLog(noRank24, "p.log"), doc, DeviceCatalog::builtin(), "p.log");
        QCOMPARE(partial.memory.size(), std::size_t(3));
        QVERIFY(std::any_of(partial.notes.begin(), partial.notes.end(), [](const std::string& n) {
            return n.rfind("no memory report in the log for stage(s) 3: they take the overhead fitted", 0) == 0;
        }));
        // The plan split 5 / 8 / 8 / 11 layers: stage 0, the lightest, logged at 79.9 GiB
        // (81,800 MB), would set the one H800 overhead far above its prediction and lift stage 3,
        // three layers heavier and logged at 37 GiB, above its 80 GiB, so that the search would
        // refuse the plan that ran. The overhead stops where stage 3 fills its device: stage 3
        // is predicted at exactly its 80 GiB, stage 0 below its log, and a note says so.
        PlanDocument uneven = doc;
        const int layers[] = {5, 8, 8, 11};
        for (int i = 0, first = 0; i < 4; first += layers[i], ++i) {
            uneven.plan.stages[static_cast<std::size_t>(i)].first_layer = first;
            uneven.plan.stages[static_cast<std::size_t>(i)].num_layers = layers[i];
        }
        const CalibrationResult over = calibrateFromLog(
            parseMegatronLog(replaced("reserved: 43520.00 | max reserved: 43520.00", "reserved: 81800.00 | max reserved: 81800.00"),
                             "over.log"),
            uneven, DeviceCatalog::builtin(), "over.log");
        QCOMPARE(over.memory.size(), std::size_t(4));
        for (const StageMemoryCheck& m : over.memory)
            QVERIFY2(m.predicted_after_gib <= m.capacity_gib * (1 + 1e-9), std::to_string(m.stage).c_str());
        QVERIFY(std::abs(over.memory[3].predicted_after_gib - over.memory[3].capacity_gib) < 1e-6);
        QVERIFY(over.memory[0].predicted_after_gib < over.memory[0].measured_gib - 1.0);
        QVERIFY(!warned(over, "GiB after calibration, above its 80.0 GiB"));
        QVERIFY(std::any_of(over.notes.begin(), over.notes.end(), [](const std::string& n) {
            return n.find("fixed overhead is capped at") != std::string::npos && n.find("where stage 3 fills its device") != std::string::npos
                && n.find("stage 0 would need") != std::string::npos;
        }));
    }

    void calibrateMatchesBaseNamesThroughTheCatalog()
    {
        // A base profile naming the H800 by another case ("h800"): its efficiency is replaced
        // and its activation factor 1.3 kept, one entry per type (validate refuses two).
        const PlanDocument doc = readPlan(readTextFile(test::dataFile("mixtral_h800_plan.json")), "mixtral_h800_plan.json");
        Profile base;
        base.device_efficiency["h800"] = 0.5;
        base.memory.push_back({"h800", 3.0, 1.3});
        const CalibrationResult r = calibrateFromLog(parseMegatronLog(readTextFile(test::dataFile("train_mixtral_h800.log")), "train.log"),
                                                     doc, DeviceCatalog::builtin(), "train.log", &base);
        QCOMPARE(r.profile.device_efficiency.size(), std::size_t(1));
        QCOMPARE(r.profile.device_efficiency.count("H800"), std::size_t(1));
        QCOMPARE(r.profile.memory.size(), std::size_t(1));
        QCOMPARE(r.profile.memory.front().device_type, std::string("H800"));
        QCOMPARE(r.profile.memory.front().activation_factor, 1.3);
        // The prediction before used the base profile's efficiency, not the catalog's.
        QCOMPARE(r.efficiency_before.at("H800"), 0.5);
    }

    void parseRunsMemoryLinesAndCutLines()
    {
        const std::string text = readTextFile(test::dataFile("train_mixtral_h800.log"));   // 24 lines
        const std::string banner = "[before the start of training step] datetime: 2026-08-22 16:00:00\n";
        const std::string first = " iteration        1/     500 | elapsed time per iteration (ms): 60000.0 | global batch size:   256 |\n";
        const std::string more = " iteration        2/     500 | elapsed time per iteration (ms): 10300.0 | global batch size:   256 |\n"
                                 " iteration        3/     500 | elapsed time per iteration (ms): 10100.0 | global batch size:   256 |\n";
        // A restart appended to the log: its start-up banner on line 25.
        const MegatronLog restarted = parseMegatronLog(text + banner + first + more, "restart.log");
        QCOMPARE(restarted.runs, 2);
        QCOMPARE(restarted.first_line, 25);
        QCOMPARE(restarted.intervals.size(), std::size_t(3));
        QCOMPARE(restarted.intervals[1].elapsed_ms, 10300.0);
        QVERIFY(restarted.memory.empty() && restarted.router_tokens.empty());   // the first run's
        QCOMPARE(restarted.warnings,
                 std::vector<std::string>{"the log holds 2 runs, starting at lines 1, 25 (a start-up line after an iteration, or an "
                                          "iteration number going backwards, starts a run); the last complete one, from line 25, is used"});
        // Without a banner the iteration number going back from 5 to 1 (line 25) starts the run.
        QCOMPARE(parseMegatronLog(text + first + more, "resumed.log").first_line, 25);
        // A restart that logged only its start-up interval is not complete: the first run is read.
        const MegatronLog crashed = parseMegatronLog(text + banner + first, "crashed.log");
        QCOMPARE(crashed.runs, 2);
        QCOMPARE(crashed.first_line, 1);
        QCOMPARE(crashed.intervals.size(), std::size_t(5));
        // Another run's start-up appended with no iteration after it (world size 16 where the
        // log's run had 32): left out, and said, since its sizes are not checked.
        const MegatronLog appended = parseMegatronLog(
            text + "using world size: 16, data-parallel size: 8, context-parallel size: 1, tensor-model-parallel size: 1, "
                   "pipeline-model-parallel size: 2\n" + banner,
            "appended.log");
        QCOMPARE(appended.first_line, 1);
        QCOMPARE(appended.sizes.world, 32);
        QCOMPARE(appended.warnings,
                 std::vector<std::string>{"the log ends with a run that starts at line 25 and logs no iteration (a restart, or "
                                          "another run's start appended?): it is left out, and the run from line 1 is used"});

        // Ranks 8 and 16 printing at once: their reports on one line (13), split at "[Rank".
        std::string joined = text;
        joined.replace(joined.find("40960.00\n[Rank 16]"), 18, "40960.00[Rank 16]");
        const MegatronLog interleaved = parseMegatronLog(joined, "interleaved.log");
        QCOMPARE(interleaved.memory.size(), std::size_t(4));
        QCOMPARE(interleaved.memory[1].max_reserved_mb, 40960.0);
        QCOMPARE(interleaved.memory[2].rank, 16);
        QCOMPARE(interleaved.memory[2].max_reserved_mb, 38912.0);
        QCOMPARE(interleaved.memory[2].line, 13);

        // A log cut in the middle of line 24's "10235.3": the part is left out, with a warning.
        const MegatronLog cut = parseMegatronLog(text.substr(0, text.find("(ms): 10235.3") + 10), "cut.log");
        QCOMPARE(cut.intervals.size(), std::size_t(4));
        QCOMPARE(cut.intervals.back().elapsed_ms, 10231.9);
        QCOMPARE(cut.warnings,
                 std::vector<std::string>{"line 24 has no end of line (was the log cut while it was written?): it is left out"});

        // Lines cut short in the middle of the log (a log copied or rotated mid-line) are
        // refused at their line, not passed over: a memory report without its later fields
        // (the fit would go without that rank), an iteration line cut before its elapsed
        // time, and one cut after it where the run's other lines state their global batch
        // size (it would escape the batch-size check).
        const auto lineOf = [&text](int n) {
            std::size_t at = 0;
            for (int i = 1; i < n; ++i)
                at = text.find('\n', at) + 1;
            return std::pair{at, text.find('\n', at) - at};
        };
        const auto refusal = [](const std::string& log) {
            try {
                parseMegatronLog(log, "cut.log");
            } catch (const InputError& e) {
                return e.where() + ": " + e.detail();
            }
            return std::string("accepted");
        };
        const auto [mem, memLength] = lineOf(12);
        QVERIFY(text.substr(mem, memLength).find("[Rank 0]") != std::string::npos);
        std::string memCut = text;
        memCut.erase(mem + 70, memLength - 70);
        QCOMPARE(refusal(memCut), std::string("line 12: memory report of rank 0: expected Megatron-LM's four fields (allocated, max "
                                              "allocated, reserved, max reserved), \"max allocated:\" is missing (is the line cut "
                                              "short?)"));
        const auto [it, itLength] = lineOf(20);
        const std::size_t elapsed = text.find("elapsed time per iteration (ms):", it);
        std::string itCut = text;
        itCut.erase(elapsed + 10, it + itLength - elapsed - 10);
        QCOMPARE(refusal(itCut), std::string("line 20: an iteration line without \"elapsed time per iteration (ms)\": expected "
                                             "Megatron-LM's training log line (is the line cut short?)"));
        std::string gbsCut = text;
        const std::size_t after = text.find(" |", elapsed + 33);
        gbsCut.erase(after, it + itLength - after);
        QCOMPARE(refusal(gbsCut), std::string("line 20: iteration line without \"global batch size\", which the run's other "
                                              "iteration lines state (line 11): is the line cut short?"));

        // A memory report and an iteration line printed on one line, either first (ranks that
        // print at once): each read as a line of its own, nothing lost, no second run.
        for (int first : {11, 15}) {
            const auto [at, length] = lineOf(first);
            std::string joined2 = text;
            joined2.erase(at + length, 1);   // line `first` runs on into the next
            const MegatronLog both = parseMegatronLog(joined2, "joined.log");
            QCOMPARE(both.runs, 1);
            QCOMPARE(both.intervals.size(), std::size_t(5));
            QCOMPARE(both.memory.size(), std::size_t(4));
            QVERIFY(both.warnings.empty());
        }

        // A rank no run has is kept as logged, for calibrate's error.
        std::string negative = text;
        negative.replace(negative.find("[Rank 8]"), 8, "[Rank -3]");
        QCOMPARE(parseMegatronLog(negative, "rank.log").memory[1].rank, -3);
    }

    void calibrateSkipsTheBatchRampUp()
    {
        // --rampup-batch-size: global batch 128 and 192 on lines 11 and 16, the plan's 256 from
        // line 20 on. Used: 10236.5, 10231.9, 10235.3 ms, of median 10235.3.
        const PlanDocument doc = readPlan(readTextFile(test::dataFile("mixtral_h800_plan.json")), "mixtral_h800_plan.json");
        std::string text = readTextFile(test::dataFile("train_mixtral_h800.log"));
        const std::string gbs = "global batch size:   256";
        text.replace(text.find(gbs), gbs.size(), "global batch size:   128");
        text.replace(text.find(gbs), gbs.size(), "global batch size:   192");
        const CalibrationResult r = calibrateFromLog(parseMegatronLog(text, "rampup.log"), doc, DeviceCatalog::builtin(), "rampup.log");
        QCOMPARE(r.intervals_ramp_up, 2);
        QCOMPARE(r.intervals_used, 3);
        QCOMPARE(r.measured_iteration_s, 10.2353);
        QVERIFY(std::find(r.notes.begin(), r.notes.end(), "2 intervals before line 20 ran a smaller global batch (ramp-up): skipped")
                != r.notes.end());
    }

    void calibrateRefusesALogOfAnotherRun()
    {
        const PlanDocument doc = readPlan(readTextFile(test::dataFile("mixtral_h800_plan.json")), "mixtral_h800_plan.json");
        const std::string text = readTextFile(test::dataFile("train_mixtral_h800.log"));
        auto refusal = [&](const std::string& logText) -> std::string {
            try {
                calibrateFromLog(parseMegatronLog(logText, "run.log"), doc, DeviceCatalog::builtin(), "run.log");
            } catch (const InputError& e) {
                if (e.file() != "run.log")
                    return "error names file " + e.file();
                return e.where() + ": " + e.detail();
            }
            return "calibrated";
        };
        auto replaced = [&](const std::string& from, const std::string& to) {
            std::string t = text;
            const std::size_t at = t.find(from);
            t.replace(at, from.size(), to);
            return t;
        };
        // The plan has 32 devices in 4 stages of TP1 DP8.
        QCOMPARE(refusal(replaced("using world size: 32", "using world size: 16")),
                 std::string("line 1: the run has world size 16, the plan \"current (train_mixtral_8x7b_distributed.sh)\" has world "
                             "size 32: expected the log of a run of this plan"));
        QVERIFY(refusal(replaced("pipeline-model-parallel size: 4", "pipeline-model-parallel size: 2"))
                    .find("the run has pipeline-model-parallel size 2") != std::string::npos);
        QVERIFY(refusal(replaced("data-parallel size: 8", "data-parallel size: 4")).find("data-parallel size 4") != std::string::npos);
        // 99999999999 MB on an 80 GiB (81920 MB) H800 of stage 0; the report is on line 12.
        QCOMPARE(refusal(replaced("max reserved: 43520.00", "max reserved: 99999999999")),
                 std::string("line 12: max reserved (MB): expected at most 81920.0, the memory of a device of pipeline stage 0 "
                             "(H800), got 1e+11"));
        QVERIFY(refusal(replaced("[Rank 8]", "[Rank 99999]")).rfind("line 13: memory report of rank 99999: expected a rank of the plan, 0 to 31", 0) == 0);
        // 0.001 ms per iteration would be an MFU far above 100% on 32 H800.
        const std::string fast = refusal(replaced("(ms): 10234.1", "(ms): 0.001"));
        QVERIFY2(fast.rfind("line 16: elapsed time per iteration 0.001 ms is shorter than the ", 0) == 0, fast.c_str());
        // Another global batch (the plan's is 256) is another run; the first iteration line is line 11.
        QCOMPARE(refusal(replaced("global batch size:   256", "global batch size:   512")),
                 std::string("line 11: the run has global batch size 512, the plan \"current (train_mixtral_8x7b_distributed.sh)\" "
                             "has global batch size 256: expected the log of a run of this plan"));
        // Router counts (line 22) a top-2 router over Mixtral's 8 experts cannot give: the layer's
        // 8000 routed tokens are 4000 tokens x 2, so no expert can have more than 4000.
        const std::string counts = "1300 1000 1000 1000 900 900 950 950";
        QCOMPARE(refusal(replaced(counts, "8000 0 0 0 0 0 0 0")),
                 std::string("line 22: tokens per expert of layer 0: expert 0 has 8000 tokens, more than the 4000 tokens of the layer "
                             "(the counts over top-2); expected counts of a top-2 router"));
        QCOMPARE(refusal(replaced(counts, "1300 1000")),
                 std::string("line 22: tokens per expert of layer 0: expected 8 counts, one per expert of \"Mixtral 8x7B (train_mixtral_8x7b_distributed.sh)\", got 2"));
        // A layer that routed no tokens is no layer of a training step (its rho is undefined).
        QCOMPARE(refusal(replaced(counts, "0 0 0 0 0 0 0 0")),
                 std::string("line 22: tokens per expert of layer 0: every count is 0; expected the counts of a layer that routed "
                             "the step's tokens"));
        QCOMPARE(refusal(replaced(counts, "-1300 1000 1000 1000 900 900 950 950")),
                 std::string("line 22: tokens per expert: expected whole token counts >= 0, got \"-1300\""));
        // Expert parallelism in the arguments dump (line 2); the plan's EP is 8.
        QCOMPARE(refusal(replaced("Number of parameters in transformer block",
                                  "  expert_model_parallel_size ...................... 4\nNumber of parameters in transformer block")),
                 std::string("line 2: the run has expert-model-parallel size 4, the plan \"current (train_mixtral_8x7b_distributed.sh)\" "
                             "has expert-model-parallel size 8: expected the log of a run of this plan"));
        // The global batch going back below the plan's after reaching it (line 21) is no ramp-up.
        QVERIFY(refusal(replaced("1024 | elapsed time per iteration (ms): 10231.9 | learning rate: 8.000000E-07 | global batch size:   256",
                                 "1024 | elapsed time per iteration (ms): 10231.9 | learning rate: 8.000000E-07 | global batch size:   128"))
                    .rfind("line 21: the run has global batch size 128, ", 0)
                == 0);
        // Megatron-LM's throughput per GPU is num_floating_point_operations / (time x 32 GPUs):
        // for Mixtral's 12.9e9 active parameters about 6 x 12.9e9 x 256 x 4096 / (10.2365 s x 32)
        // = 253 TFLOP/s (247 plus the attention core); 99999 on line 20 is another model's.
        const std::string lr = "| learning rate: 6.000000E-07";
        QCOMPARE(refusal(replaced(lr, "| throughput per GPU (TFLOP/s/GPU): 99999.0 " + lr)),
                 std::string("line 20: throughput per GPU 99999.0 TFLOP/s is more than 2x off the 255.1 TFLOP/s the plan's model "
                             "\"Mixtral 8x7B (train_mixtral_8x7b_distributed.sh)\" gives at this iteration time (Megatron-LM's "
                             "num_floating_point_operations for global batch 256 on 32 GPUs): expected the log of a run of this "
                             "plan's model"));
        QCOMPARE(refusal(replaced(lr, "| throughput per GPU (TFLOP/s/GPU): 255.0 " + lr)), std::string("calibrated"));
        // Not a number Megatron-LM prints: named, not passed over (the check above would be left out).
        QCOMPARE(refusal(replaced(lr, "| throughput per GPU (TFLOP/s/GPU): nan " + lr)),
                 std::string("line 20: throughput per GPU (TFLOP/s/GPU): expected a number, got \"nan\""));
        // Hexadecimal is what strtod reads, not what a log holds: 0x1p13 is no iteration time.
        QVERIFY(refusal(replaced("(ms): 10234.1", "(ms): 0x1p13")).rfind("line 16: elapsed time per iteration (ms): expected a positive number", 0) == 0);
        // A token count is whole.
        QCOMPARE(refusal(replaced(counts, "1300.5 1000 1000 1000 900 900 950 950")),
                 std::string("line 22: tokens per expert: expected whole token counts >= 0, got \"1300.5\""));
        QCOMPARE(refusal(replaced("[Rank 8]", "[Rank -3]")),
                 std::string("line 13: memory report of rank -3: expected a rank of the plan, 0 to 31 (is the log from this plan's run?)"));
        // A rank no int holds is named as written, not as the nearest one an int does.
        QCOMPARE(refusal(replaced("[Rank 8]", "[Rank 99999999999999999999]")),
                 std::string("line 13: memory report: expected a rank (a whole number from 0) after \"[Rank\", got "
                             "\"99999999999999999999\""));
        // Not a number: named, not read as rank 0.
        QCOMPARE(refusal(replaced("[Rank 8]", "[Rank a0]")),
                 std::string("line 13: memory report: expected a rank (a whole number from 0) after \"[Rank\", got \"a0\""));
        QCOMPARE(refusal(replaced("[Rank 8]", "[Rank 0x8]")),
                 std::string("line 13: memory report: expected a rank (a whole number from 0) after \"[Rank\", got \"0x8\""));
        QCOMPARE(refusal(text), std::string("calibrated"));
    }
};

QTEST_APPLESS_MAIN(TestLogCalibration)
#include "TestLogCalibration.moc"
