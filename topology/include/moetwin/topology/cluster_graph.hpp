// The cluster as a Boost.Graph of GPUs, NVSwitch fabrics, NICs, uplinks and the inter-domain fabric
// (cluster.hpp says what each vertex and edge is). Apart from cluster.hpp so that the many files that use a
// Cluster's counts and routes do not parse Boost.Graph; include this one only to walk the graph.
#pragma once

#include <boost/graph/adjacency_list.hpp>

#include "moetwin/topology/cluster.hpp"

namespace moetwin {

struct ClusterGraph
    : boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, ClusterVertex, ClusterEdge> {
  using adjacency_list::adjacency_list;
};

}  // namespace moetwin
