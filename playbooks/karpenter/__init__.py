"""A model of how Karpenter decides whether a NodePool can launch a node for a pod, one small module
per concern (requirements, labels, resources and overhead, limits, offerings, topology, API versions),
each citing the upstream source it follows."""
