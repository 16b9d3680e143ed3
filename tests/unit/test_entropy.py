"""Request ids and salts come from the OS's generator in blocks: never repeated, and never
shared with a forked child."""

from __future__ import annotations

import os

from crossfill.app.entropy import EntropyPool, new_entropy


def test_draws_across_blocks_are_all_distinct() -> None:
    pool = EntropyPool()
    draws = [pool.draw() for _ in range(600)]  # more than two blocks
    assert len({draw.request_id for draw in draws}) == 600
    assert len({draw.salt for draw in draws}) == 600
    assert all(len(draw.request_id) == 32 and 0 <= draw.salt < 2**256 for draw in draws)


def test_a_forked_child_does_not_reuse_its_parents_block() -> None:
    new_entropy()  # the parent's block is filled before the fork
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's own process
        os.write(writing, new_entropy().request_id)
        os._exit(0)
    os.close(writing)
    os.waitpid(child, 0)
    childs = os.read(reading, 32)
    os.close(reading)
    assert len(childs) == 32
    assert childs != new_entropy().request_id
