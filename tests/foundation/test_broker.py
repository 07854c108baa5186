"""The broker's Redis transport (memoryhub/broker.py): a channel polling Redis when Redis goes
away is closed all the same, so a worker's second close of its lost connection finds nothing
left to close (with kombu's channel it found a half-closed one, and the worker exited)."""

from __future__ import annotations

import socket

import pytest
from kombu import Connection, Queue

from memoryhub.broker import RedisTransport
from tests.redis_server import RedisServer


@pytest.mark.redis
def test_it_closes_a_channel_whose_poll_the_broker_cut(redis_server: RedisServer) -> None:
    with Connection(redis_server.url, transport=RedisTransport) as connection:
        channel = connection.channel()
        consumer = connection.Consumer([Queue("idle")], channel=channel, accept=["json"])
        consumer.consume()
        # Nothing to receive: the wait ends on the timeout, the channel's BRPOP still sent.
        with pytest.raises(socket.timeout):
            connection.drain_events(timeout=0.2)
        redis_server.stop()

        with pytest.raises(connection.connection_errors):
            channel.close()  # reading the BRPOP's reply fails: Redis is gone
        assert channel.closed
