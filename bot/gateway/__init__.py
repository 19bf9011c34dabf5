"""The only code that talks to the Kubernetes and EC2 APIs."""
from bot.gateway.kube import ClusterGateway, connect
from bot.gateway.ec2 import Ec2Catalog, InstanceTypeInfo

__all__ = ["ClusterGateway", "connect", "Ec2Catalog", "InstanceTypeInfo"]
