#include "megatron/PipelineLayout.h"

#include <algorithm>
#include <cctype>

namespace hapmoe {

namespace {

std::string repeatStage(int layers, bool shorthand)
{
    if (layers <= 0)
        return {};
    if (shorthand && layers > 1)
        return "t*" + std::to_string(layers);
    return std::string(static_cast<std::size_t>(layers), 't');
}

bool readCount(const std::string& s, std::size_t& i, long& n)
{
    const std::size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
        ++i;
    if (i == start || i - start > 6)
        return false;
    n = std::stol(s.substr(start, i - start));
    return true;
}

} // namespace

namespace {

std::vector<std::string> rangeTexts(const std::vector<std::vector<LayerRange>>& ranks)
{
    std::vector<std::string> ranges;
    for (const std::vector<LayerRange>& rank : ranks) {
        std::string text;
        for (const LayerRange& r : rank) {
            if (r.count <= 0)
                continue;
            text += (text.empty() ? "" : ", ") + std::to_string(r.first);
            if (r.count > 1)
                text += "-" + std::to_string(r.first + r.count - 1);
        }
        ranges.push_back(std::move(text));
    }
    return ranges;
}

} // namespace

std::vector<std::string> PipelineLayout::rankLayerRanges(const std::vector<int>& layersPerRank, int vpp)
{
    return rangeTexts(rankLayers(layersPerRank, vpp));
}

std::vector<std::string> PipelineLayout::rankLayerRanges(const Plan& plan) { return rangeTexts(plan.rankLayers()); }

std::string PipelineLayout::mtpMark(int mtpLayers)
{
    if (mtpLayers <= 0)
        return {};
    return mtpLayers == 1 ? std::string("+MTP") : "+" + std::to_string(mtpLayers) + " MTP";
}

std::string PipelineLayout::fromSplit(const std::vector<int>& layersPerRank, int vpp, bool shorthand, int mtpLayers)
{
    vpp = std::max(1, vpp);
    std::vector<std::vector<int>> perRank;
    for (int n : layersPerRank)
        perRank.push_back(chunkLayers(n, vpp));
    return fromChunks(perRank, shorthand, mtpLayers);
}

std::string PipelineLayout::fromChunks(const std::vector<std::vector<int>>& chunksPerRank, bool shorthand, int mtpLayers)
{
    const int pp = static_cast<int>(chunksPerRank.size());
    int vpp = 1;
    for (const std::vector<int>& c : chunksPerRank)
        vpp = std::max(vpp, static_cast<int>(c.size()));
    std::vector<std::string> stages(static_cast<std::size_t>(pp * vpp));
    for (int r = 0; r < pp; ++r) {
        const std::vector<int>& perChunk = chunksPerRank[static_cast<std::size_t>(r)];
        for (int c = 0; c < vpp && c < static_cast<int>(perChunk.size()); ++c)
            stages[static_cast<std::size_t>(c * pp + r)] = repeatStage(perChunk[static_cast<std::size_t>(c)], shorthand);
    }
    // MTP layers follow the decoder layers in the last chunk of the last rank.
    if (!stages.empty() && mtpLayers > 0)
        stages.back() += std::string(static_cast<std::size_t>(mtpLayers), 'm');
    std::string out;
    for (std::size_t i = 0; i < stages.size(); ++i) {
        if (i > 0)
            out += '|';
        if (i == 0)
            out += 'E';
        out += stages[i];
    }
    out += 'L';
    return out;
}

std::string PipelineLayout::expand(const std::string& layout, std::string& error)
{
    std::string s;
    for (char c : layout)
        if (c != ',' && !std::isspace(static_cast<unsigned char>(c)))
            s += c;
    // (X)*n, no nesting.
    std::string a;
    for (std::size_t i = 0; i < s.size();) {
        if (s[i] == '(') {
            const std::size_t close = s.find(')', i);
            if (close == std::string::npos || s.find('(', i + 1) < close) {
                error = "unbalanced or nested parentheses";
                return {};
            }
            std::size_t j = close + 1;
            long n = 1;
            if (j < s.size() && s[j] == '*') {
                ++j;
                if (!readCount(s, j, n)) {
                    error = "expected a count after ')*'";
                    return {};
                }
            }
            const std::string body = s.substr(i + 1, close - i - 1);
            if (static_cast<double>(body.size()) * static_cast<double>(n) > 1e6) {
                error = "layout too long";
                return {};
            }
            for (long k = 0; k < n; ++k)
                a += body;
            i = j;
        } else if (s[i] == ')') {
            error = "unbalanced parentheses";
            return {};
        } else {
            a += s[i++];
        }
    }
    // c*n repeats the single character before '*'.
    std::string b;
    for (std::size_t i = 0; i < a.size();) {
        if (a[i] == '*') {
            if (b.empty()) {
                error = "'*' with nothing to repeat";
                return {};
            }
            std::size_t j = i + 1;
            long n = 0;
            if (!readCount(a, j, n)) {
                error = "expected a count after '*'";
                return {};
            }
            const char c = b.back();
            b.pop_back();
            if (n > 1000000) {
                error = "layout too long";
                return {};
            }
            b.append(static_cast<std::size_t>(n), c);
            i = j;
        } else {
            b += a[i++];
        }
    }
    for (char c : b)
        if (c != 'E' && c != 't' && c != 'm' && c != 'L' && c != '|') {
            error = std::string("unexpected character '") + c + "' (allowed: E t m L |)";
            return {};
        }
    return b;
}

bool PipelineLayout::parse(const std::string& layout, int pp, std::vector<int>& layersPerRank, int& vpp,
                           int& mtpLayers, std::string& error, std::vector<std::vector<int>>* layersPerChunk, int* mtpRank)
{
    const std::string s = expand(layout, error);
    if (s.empty()) {
        if (error.empty())
            error = "empty layout";
        return false;
    }
    std::vector<std::string> stages;
    std::string cur;
    for (char c : s) {
        if (c == '|') {
            stages.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    stages.push_back(cur);
    if (pp < 1 || stages.size() % static_cast<std::size_t>(pp) != 0) {
        error = std::to_string(stages.size()) + " stages are not a multiple of PP " + std::to_string(pp);
        return false;
    }
    if (s.front() != 'E' || s.back() != 'L' || std::count(s.begin(), s.end(), 'E') != 1
        || std::count(s.begin(), s.end(), 'L') != 1) {
        error = "the layout must start with E and end with L, each exactly once";
        return false;
    }
    vpp = static_cast<int>(stages.size()) / pp;
    layersPerRank.assign(static_cast<std::size_t>(pp), 0);
    if (layersPerChunk)
        layersPerChunk->assign(static_cast<std::size_t>(pp), std::vector<int>(static_cast<std::size_t>(vpp), 0));
    mtpLayers = 0;
    int holder = -1;   // the stage with MTP layers
    for (std::size_t i = 0; i < stages.size(); ++i) {
        const int decoder = static_cast<int>(std::count(stages[i].begin(), stages[i].end(), 't'));
        layersPerRank[i % static_cast<std::size_t>(pp)] += decoder;
        if (layersPerChunk)
            (*layersPerChunk)[i % static_cast<std::size_t>(pp)][i / static_cast<std::size_t>(pp)] = decoder;
        const int mtp = static_cast<int>(std::count(stages[i].begin(), stages[i].end(), 'm'));
        if (mtp > 0 && holder >= 0) {
            error = "the MTP layers are in more than one stage (Megatron-LM's validate_layer_layout: \"All of the MTP layers "
                    "must be in the same one virtual pipeline stage\")";
            return false;
        }
        if (mtp > 0)
            holder = static_cast<int>(i);
        mtpLayers += mtp;
    }
    if (holder >= 0) {
        // The flattened layout (validate_layer_layout reads it in stage order): no decoder
        // layer after the first MTP layer, and the MTP in its rank's last virtual stage.
        if (s.find('t', s.find('m')) != std::string::npos) {
            error = "a decoder layer comes after an MTP layer (Megatron-LM's validate_layer_layout: \"decoder layers must be "
                    "placed before MTP layers\")";
            return false;
        }
        if (holder / pp != vpp - 1) {
            error = "the MTP layers are in virtual stage " + std::to_string(holder / pp) + " of pipeline rank "
                + std::to_string(holder % pp) + ", not its last (Megatron-LM's validate_layer_layout: \"the MTP should be always "
                  "in the last virtual pipeline stage of that rank\")";
            return false;
        }
    }
    if (mtpRank)
        *mtpRank = holder >= 0 ? holder % pp : -1;
    return true;
}

} // namespace hapmoe
