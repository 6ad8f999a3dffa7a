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
};

QTEST_APPLESS_MAIN(TestLogCalibration)
#include "TestLogCalibration.moc"
