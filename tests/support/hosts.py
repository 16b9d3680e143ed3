"""Separate hosts on this machine: Linux network namespaces, each with an address on a bridge
of its own, as machines on one network would be. Processes run on a host through
`Host.command` (`ip netns exec`); they reach nothing of this (the root) namespace's loopback,
only addresses on the bridge. Servers that listen on loopback only (PostgreSQL, Redis, the
anvil chains) are reached through `TcpRelay`s listening on the bridge's own address
(`HostNetwork.gateway`).

Needs root (`ip netns add`); `unavailable()` says why not when it cannot run. Everything is
named uniquely per network, and `host_network()` removes the namespaces, their links and the
bridge on the way out, whatever happened inside.
"""

from __future__ import annotations

import ipaddress
import os
import random
import shutil
import signal
import subprocess
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

from tests.support.tcp_relay import TcpRelay


def unavailable() -> str | None:
    """Why network namespaces cannot be made here, or None when they can (one is made and
    removed to find out)."""
    if os.geteuid() != 0:
        return "separate hosts are network namespaces: `ip netns add` needs root"
    if shutil.which("ip") is None:
        return "separate hosts are network namespaces: the `ip` command (iproute2) is missing"
    probe = f"cf{uuid.uuid4().hex[:6]}-probe"
    made = _ip("netns", "add", probe, check=False)
    _ip("netns", "delete", probe, check=False)
    if made.returncode != 0:
        return f"separate hosts are network namespaces: `ip netns add` failed: {made.stderr}"
    return None


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True, timeout=10)


@dataclass(frozen=True)
class Host:
    """A network namespace with one address on the network's bridge."""

    namespace: str
    address: str

    def command(self, argv: Sequence[str]) -> list[str]:
        """`argv` run on this host."""
        return ["ip", "netns", "exec", self.namespace, *argv]


@dataclass
class HostNetwork:
    """A bridge in this namespace whose address (`gateway`) the hosts route through."""

    tag: str
    subnet: ipaddress.IPv4Network
    hosts: list[Host] = field(default_factory=list)
    relays: list[TcpRelay] = field(default_factory=list)

    @property
    def bridge(self) -> str:
        return f"cfbr{self.tag}"

    @property
    def gateway(self) -> str:
        return str(self.subnet.network_address + 1)

    def add_host(self, role: str) -> Host:
        """A new host (namespace) named after its `role`, on the bridge, its loopback up."""
        number = len(self.hosts) + 2
        host = Host(f"cf{self.tag}-{role}", str(self.subnet.network_address + number))
        outside, inside = f"cfv{self.tag}{number}", f"cfp{self.tag}{number}"
        self.hosts.append(host)  # removed on the way out even if a step below fails
        _ip("netns", "add", host.namespace)
        _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
        _ip("link", "set", outside, "master", self.bridge, "up")
        _ip("link", "set", inside, "netns", host.namespace)
        inside_ip = ("-n", host.namespace)
        _ip(*inside_ip, "link", "set", "lo", "up")
        _ip(*inside_ip, "link", "set", inside, "name", "eth0")
        _ip(*inside_ip, "addr", "add", f"{host.address}/{self.subnet.prefixlen}", "dev", "eth0")
        _ip(*inside_ip, "link", "set", "eth0", "up")
        _ip(*inside_ip, "route", "add", "default", "via", self.gateway)
        return host

    def relay(self, port: int) -> TcpRelay:
        """A relay on the gateway to port `port` of this namespace's loopback: its address
        is what the hosts use for that server. Stopped with the network."""
        relay = TcpRelay(port, host=self.gateway).start()
        self.relays.append(relay)
        return relay

    def _remove(self) -> None:
        for relay in self.relays:
            relay.stop()
        for host in self.hosts:
            _kill_left_in(host.namespace)
            _ip("netns", "delete", host.namespace, check=False)  # its veth pair goes with it
        _ip("link", "delete", self.bridge, check=False)


def _kill_left_in(namespace: str) -> None:
    """Whatever a failed test left running on the host (only what the test started there)."""
    found = _ip("netns", "pids", namespace, check=False).stdout.split()
    for pid in found:
        with suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGKILL)


def _free_subnet() -> ipaddress.IPv4Network:
    """A /24 in 10.0.0.0/8 that no interface or route of this host uses."""
    taken = [
        ipaddress.ip_network(word, strict=False)
        for line in (_ip("-4", "route").stdout + _ip("-4", "-o", "addr").stdout).splitlines()
        for word in line.split()
        if "/" in word and word[0].isdigit()
    ]
    while True:
        subnet = ipaddress.IPv4Network(
            f"10.{random.randint(100, 254)}.{random.randint(0, 255)}.0/24"
        )
        if not any(subnet.overlaps(other) for other in taken):
            return subnet


@contextmanager
def host_network() -> Iterator[HostNetwork]:
    """A new bridge with its own subnet; its hosts added with `add_host`. Everything removed
    afterwards."""
    network = HostNetwork(uuid.uuid4().hex[:6], _free_subnet())
    try:
        _ip("link", "add", network.bridge, "type", "bridge")
        _ip("addr", "add", f"{network.gateway}/{network.subnet.prefixlen}", "dev", network.bridge)
        _ip("link", "set", network.bridge, "up")
        yield network
    finally:
        network._remove()
