#include "cost/ProfileCheck.h"

#include "cost/LayerShape.h"
#include "util/Strings.h"

#include <algorithm>
#include <cmath>

namespace hapmoe {

namespace {

std::string percentText(double fraction)
{
    // "242 %", "0.05 %": two decimals below 1 %, whole per cent above.
    const double p = 100.0 * fraction;
    return numberForMessage(p < 1 ? std::round(p * 100) / 100 : std::round(p)) + " %";
}

// One warning per kind of problem: the first entry's in full, the others named.
struct Finding {
    std::string first;
    std::vector<std::string> others;
    void add(const std::string& entry, const std::string& message)
    {
        if (first.empty())
            first = message;
        else
            others.push_back(entry);
    }
    void flush(Warnings& warnings) const
    {
        if (first.empty())
            return;
        std::string w = first;
        if (!others.empty()) {
            w += " (also ";
            const std::size_t shown = std::min<std::size_t>(others.size(), 5);
            for (std::size_t i = 0; i < shown; ++i)
                w += (i ? ", " : "") + others[i];
            if (others.size() > shown)
                w += " and " + std::to_string(others.size() - shown) + " more";
            w += ")";
        }
        warnings.push_back(w);
    }
};

} // namespace

Warnings profilePlausibilityWarnings(const Profile& profile, const ModelSpec& model, const DeviceCatalog& catalog,
                                     const std::string& fileName)
{
    Warnings warnings;
    const LayerShape shape = LayerShape::of(model);
    // A dense layer's forward FLOPs per token, Megatron's counting (docs/cost-model.md
    // section 1); the backward is twice the forward.
    const double perToken = shape.forwardFlopsPerToken(false);
    Finding tooFast, tooSlow;
    for (std::size_t i = 0; i < profile.compute.size(); ++i) {
        const ComputeEntry& e = profile.compute[i];
        const DeviceType* dev = catalog.find(e.device_type);
        if (!dev || dev->bf16_tflops <= 0 || e.tp < 1)
            continue;
        // The peak the model's GEMMs run at: FP8's where it trains in FP8 on a type that has
        // it, as the prediction's MFU counts it.
        const double peak = (model.training.fp8() && dev->fp8_tflops > 0 ? dev->fp8_tflops : dev->bf16_tflops) * 1e12;
        const double flops = perToken * static_cast<double>(e.tokens) / e.tp;
        const std::string entry = "compute[" + std::to_string(i) + "]";
        // The pass furthest from the plausible range speaks for the entry.
        const double fwdRate = e.dense_layer_fwd_s > 0 ? flops / e.dense_layer_fwd_s : 0;
        const double bwdRate = e.dense_layer_bwd_s > 0 ? 2 * flops / e.dense_layer_bwd_s : 0;
        const bool fwdFast = fwdRate >= bwdRate;
        const double fastest = fwdFast ? fwdRate : bwdRate;
        const double slowest = fwdRate > 0 && (bwdRate <= 0 || fwdRate <= bwdRate) ? fwdRate : bwdRate;
        auto says = [&](bool fwd, double rate) {
            return fileName + ": profile." + entry + (fwd ? ".dense_layer_fwd_s: " : ".dense_layer_bwd_s: ")
                + numberForMessage(fwd ? e.dense_layer_fwd_s : e.dense_layer_bwd_s) + " s for " + std::to_string(e.tokens)
                + " tokens at TP " + std::to_string(e.tp) + " is " + percentText(rate / (dev->bf16_tflops * 1e12)) + " of "
                + dev->name + "'s BF16 peak for this model's layer (" + numberForMessage(std::round(flops / 1e6) / 1e3)
                + " GFLOP per device forward, " + numberForMessage(std::round(2 * flops / 1e6) / 1e3) + " backward)";
        };
        if (fastest > peak)
            tooFast.add(entry, says(fwdFast, fastest) + ", faster than the device's " + (peak > dev->bf16_tflops * 1e12 ? "FP8" : "BF16")
                                   + " peak; expected a measurement of this model's layer (a profile of a smaller model, or of "
                                     "fewer tokens?)");
        else if (slowest > 0 && slowest < 1e-3 * dev->bf16_tflops * 1e12)
            tooSlow.add(entry, says(slowest == fwdRate, slowest)
                                   + "; expected seconds (a time in milliseconds?) and the tokens of a micro-batch (mbs x "
                                     "seq / CP, not the micro-batch size)");
    }
    Finding slow;
    for (std::size_t i = 0; i < profile.collectives.size(); ++i) {
        const CollectiveEntry& e = profile.collectives[i];
        if (e.time_s <= 0)
            continue;
        const std::string entry = "collectives[" + std::to_string(i) + "]";
        // The longest a data-centre link takes: the latency of a ring's 2 (n - 1) + 1 steps at
        // 50 us each (generous for NVLink's 10 us and InfiniBand's 20 us; ten times that over
        // the cross-vendor bridge, gloo over TCP), and the bytes at 50 MB/s (0.4 Gb/s).
        const double latency = (e.link == LinkClass::CrossType ? 10.0 : 1.0) * (2.0 * (e.group_size - 1) + 1) * 50e-6;
        const double bound = latency + e.bytes / 50e6;
        if (e.time_s > bound)
            slow.add(entry, fileName + ": profile." + entry + ": " + numberForMessage(e.bytes) + " bytes per rank in "
                                + numberForMessage(e.time_s) + " s is slower than any data-centre link takes for it ("
                                + numberForMessage(std::round(latency * 1e6) / 1e3) + " ms of latency for a group of "
                                + std::to_string(e.group_size) + " and the bytes at 50 MB/s: "
                                + numberForMessage(std::round(bound * 1e6) / 1e3)
                                + " ms); expected bytes in bytes (not KiB or MiB) and time_s in seconds");
    }
    for (const Finding* f : {&tooFast, &tooSlow, &slow})
        f->flush(warnings);
    return warnings;
}

} // namespace hapmoe
