// Log calibration: a Mixtral 8x7B run on 4 x 8 H800 logged in Megatron-LM's format
// (tests/data/megatron/train_mixtral_h800.log); the calibrated profile moves the predicted
// iteration time from the catalog default to within 2% of the logged one.

#include "MegatronTestUtil.h"

#include "cost/CostModel.h"
#include "megatron/LogCalibration.h"

#include <QTest>

#include <cmath>

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
        // Intervals 2-5 (the first includes start-up): (10234.1 + 10236.5 + 10231.9 + 10235.3) / 4 ms.
        QCOMPARE(r.intervals_used, 4);
        QVERIFY(std::abs(r.measured_iteration_s - 10.23445) < 1e-9);
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

        // Re-estimating with the written and re-read profile lands on the logged time too.
        const Profile reread = readProfile(writeProfile(r.profile), "calibrated.json");
        const CostModel cost(doc.model, doc.cluster, DeviceCatalog::builtin(), &reread);
        const Prediction p = cost.estimate(doc.plan);
        QVERIFY(std::abs(p.iteration_time_s - r.measured_iteration_s) / r.measured_iteration_s < 0.02);
        QVERIFY(p.used_profile);

        // Memory: one H800 overhead for the four stages; the mean over stages of the prediction
        // equals the mean of the logged max reserved (43520 + 40960 + 38912 + 37888) / 4 MB.
        QCOMPARE(r.memory.size(), std::size_t(4));
        QCOMPARE(r.profile.memory.size(), std::size_t(1));
        double measured = 0, predicted = 0;
        for (const StageMemoryCheck& m : r.memory) {
            measured += m.measured_gib;
            predicted += m.predicted_after_gib;
        }
        QVERIFY(std::abs(measured / 4 - (43520.0 + 40960.0 + 38912.0 + 37888.0) / 4 / 1024.0) < 1e-9);
        QVERIFY(std::abs(predicted - measured) < 1e-6 * measured);
    }

    void runSwitchesFromTheArguments()
    {
        // Megatron-LM prints its arguments after validate_args ("  overlap_grad_reduce ....
        // False"). A run without the data-parallel overlap is costed as it ran: its gradient
        // reduction and parameter gather are exposed, so the prediction before calibration is
        // longer than with the plan's (default) switches, and the note says why.
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
        QVERIFY2(asRun.predicted_before_s > asPlanned.predicted_before_s,
                 qPrintable(QString("%1 vs %2").arg(asRun.predicted_before_s).arg(asPlanned.predicted_before_s)));
        // With the exposed traffic counted, less of the logged time is left for compute: the
        // fitted efficiency is higher.
        QVERIFY(asRun.efficiency_scale > asPlanned.efficiency_scale);
        const auto said = [](const CalibrationResult& r) {
            return std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
                return n.find("the run's arguments (line 2) say it ran without --overlap-grad-reduce, without --overlap-param-gather; "
                              "the cost model's defaults assumed otherwise, so the run is costed as it ran") != std::string::npos;
            });
        };
        QVERIFY(said(asRun));
        QVERIFY(!said(asPlanned));
        // Plain 1F1B: Megatron-LM prints overlap_p2p_comm False, which changes nothing.
        QVERIFY(std::none_of(asRun.notes.begin(), asRun.notes.end(), [](const std::string& n) { return n.find("p2p") != std::string::npos; }));
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
        QCOMPARE(log.sizes.line, 1);
        const MegatronLog dump = parseMegatronLog("  world_size ...................................... 16\n"
                                                  "  expert_model_parallel_size ...................... 4\n"
                                                  " iteration 1/ 5 | elapsed time per iteration (ms): 100.0 |\n",
                                                  "dump.log");
        QCOMPARE(dump.sizes.world, 16);
        QCOMPARE(dump.sizes.ep, 4);
        QCOMPARE(dump.sizes.tp, 0);
        // Numbers no run has where a count is read (an iteration, a layer) are not taken:
        // they would not even convert to an integer.
        const MegatronLog huge = parseMegatronLog(" iteration 6.7e65/ 5 | elapsed time per iteration (ms): 100.0 |\n"
                                                  " layer 1e300 tokens per expert: 10 20 30\n"
                                                  " layer 2 tokens per expert: 10 20 30\n",
                                                  "huge.log");
        QCOMPARE(huge.intervals.size(), std::size_t(1));
        QCOMPARE(huge.intervals.front().iteration, 0LL);
        QCOMPARE(huge.router_tokens.size(), std::size_t(1));
        QVERIFY(huge.router_tokens.count(2));
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
        QCOMPARE(refusal(replaced(counts, "-1300 1000 1000 1000 900 900 950 950")),
                 std::string("line 22: tokens per expert: expected token counts >= 0, got \"-1300\""));
        QCOMPARE(refusal(text), std::string("calibrated"));
    }
};

QTEST_APPLESS_MAIN(TestLogCalibration)
#include "TestLogCalibration.moc"
