// Unit-test support: a cluster of a shipped instance (needs topology/).
#pragma once

#include <string>

#include "moetwin/test_support/shipped_catalog.hpp"
#include "moetwin/topology/cluster.hpp"

namespace moetwin::test_support {

// `nodes` nodes of the catalog instance `instance` with its GPU, not sealed (options can still change).
inline Cluster cluster_of(const std::string& instance, int nodes, ClusterOptions options = {}) {
  const InstanceSpec& i = catalog().instance(instance);
  return Cluster(i, catalog().gpu(i.gpu), nodes, options);
}

// The same, sealed: what the collectives and the network models read.
inline Cluster sealed_cluster(const std::string& instance, int nodes, ClusterOptions options = {}) {
  Cluster c = cluster_of(instance, nodes, options);
  c.seal();
  return c;
}

}  // namespace moetwin::test_support
