#pragma once
// Canvas positions for a cluster that has none (presets, shorthand clusters, files written
// by the command line): switches in rows by their distance from the spine, the nodes of each
// switch in a block of rows under it, with as many columns as draw the cluster about 4:3.

#include "hardware/Cluster.h"

namespace hapmoe::ui {

// True when every node and switch sits at the same point (no layout was ever made).
bool needsLayout(const Cluster& cluster);
void layoutCluster(Cluster& cluster);
// Makes a cluster fit the canvas items: a full layout when it has none, else the positions
// scaled up just enough that no two items overlap (files written for a denser drawing).
// Returns true when positions changed.
bool fitLayout(Cluster& cluster);

} // namespace hapmoe::ui
