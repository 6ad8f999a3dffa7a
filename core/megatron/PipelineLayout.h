#pragma once
// Megatron-LM's --pipeline-model-parallel-layout string (reference section 4a, from
// megatron/core/transformer/pipeline_parallel_layer_layout.py): stages separated by '|',
// 'E' embedding, 't' decoder layer, 'm' MTP layer, 'L' loss; "(X)*n" and "c*n" repeat;
// commas are cosmetic. Stage i of the string is virtual chunk i / PP of pipeline rank i % PP.

#include "plan/Plan.h"

#include <string>
#include <vector>

namespace hapmoe {

class PipelineLayout {
public:
    // Layout for per-rank layer counts [n_0, ..., n_{PP-1}] with vpp chunks per rank: each
    // rank's layers are spread over its chunks as evenly as possible (earlier chunks get
    // the extra layer). shorthand writes "t*n" instead of n letters. mtpLayers 'm' go into
    // the last chunk of the last rank, before 'L': validate_layer_layout asserts that the
    // layout holds exactly --mtp-num-layers of them when that flag is set (reference 4a).
    static std::string fromSplit(const std::vector<int>& layersPerRank, int vpp, bool shorthand, int mtpLayers = 0);
    // The same with each rank's chunks given (chunksPerRank[r][c] decoder layers in chunk c).
    static std::string fromChunks(const std::vector<std::vector<int>>& chunksPerRank, bool shorthand, int mtpLayers = 0);

    // The decoder layers each pipeline rank holds, as "first-last" ranges in layer order ("7"
    // for one layer), one per non-empty chunk: chunk c of rank r is virtual stage c * PP + r,
    // and with vpp 1 a rank holds one range ("0-5, 16-21" for rank 0 of 4 x 12 layers at vpp 2).
    static std::vector<std::string> rankLayerRanges(const std::vector<int>& layersPerRank, int vpp);
    // The same for a plan's stages (their num_layers and the plan's vpp).
    static std::vector<std::string> rankLayerRanges(const Plan& plan);
    // What the last pipeline rank holds besides its decoder layers, the model's MTP depths
    // (costed there, docs/cost-model.md section 3.9): "+MTP", "+2 MTP", "" without.
    static std::string mtpMark(int mtpLayers);

    // Parses a layout for pp pipeline ranks. On success fills the decoder layers per rank
    // (summed over chunks), the number of virtual chunks and the MTP layer count, and, when
    // layersPerChunk is given, the decoder layers of each chunk per rank, and when mtpRank is
    // given the pipeline rank that holds the MTP layers (-1 without). On failure returns false
    // and says why: besides the form, MTP layers that Megatron-LM's validate_layer_layout
    // refuses (after a decoder layer, outside a rank's last virtual stage, or in more than one
    // stage).
    static bool parse(const std::string& layout, int pp, std::vector<int>& layersPerRank, int& vpp,
                      int& mtpLayers, std::string& error, std::vector<std::vector<int>>* layersPerChunk = nullptr,
                      int* mtpRank = nullptr);

    // The layout with the repetitions expanded (what Megatron parses), or "" when malformed.
    static std::string expand(const std::string& layout, std::string& error);
};

} // namespace hapmoe
