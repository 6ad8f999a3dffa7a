#pragma once
// One row of the plan explorer: a plan with its prediction and where it came from
// (the search's ranking, a baseline, or the user's current configuration).

#include "search/Search.h"

#include <QString>

namespace hapmoe::ui {

struct ExplorerPlan {
    enum class Kind { Ranked, UniformBaseline, MetisBaseline, Current };

    RankedPlan ranked;
    Kind kind = Kind::Ranked;
    int rank = 0;              // 1-based among the ranked plans, 0 otherwise
    Target target = Target::Any;  // the target the plan deploys on (resolved, never Any when known)
    // The current configuration on a cluster where its launcher cannot run it: why
    // (LauncherChoice::unlaunchable; empty otherwise, and for the search's own plans).
    std::string launch_problem;
    // Devices of the cluster the plan neither uses nor names among its unused ones (a plan
    // written by hand, or by an import, leaves `unused` empty).
    int unaccounted = 0;

    const Plan& plan() const { return ranked.plan; }
    const Prediction& prediction() const { return ranked.prediction; }
};

QString kindLabel(ExplorerPlan::Kind kind);
QString displayName(const ExplorerPlan& entry);
// The bold name and, unless the name already is it ("uniform baseline"), the kind: "<b>HS-DP
// #1</b> (search)", or with `separator` " · " "<b>HS-DP #1</b> · search". HTML.
QString nameAndKindHtml(const ExplorerPlan& entry, const QString& separator = QString());
// Why a search returned no plan, in words: the core's reason (SearchResult::no_plan_reason,
// which names the memory shortfall when the search ran to its end) and, when the time limit
// or a cancel cut it short while most options it pruned were short of memory, that share.
QString noPlanReason(const SearchResult& result);


} // namespace hapmoe::ui
