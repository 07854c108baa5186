"""The Redis transport of the task broker: kombu's, with a channel that closes even when Redis
went away while it was polling.

Closing a Redis channel first reads the reply of the BRPOP it may have in flight. With Redis
gone that read fails, and kombu's channel is left half-closed (not marked closed). A worker
that loses its broker closes its connection twice: Celery collects it (which detaches the
transport), then closes it. The second close met the half-closed channel, which tried to
reconnect through the detached transport, raised AttributeError, and the worker exited
("Unrecoverable error") instead of reconnecting when Redis came back.

Chosen by settings.CELERY_BROKER_TRANSPORT when the broker is Redis.
"""

from __future__ import annotations

from kombu.transport import redis


class RedisChannel(redis.Channel):
    def close(self) -> None:
        try:
            super().close()
        except self.connection.connection_errors:
            if not self.closed:
                # The failed read ended the poll: this close goes through (its attempt to
                # give unacknowledged messages back may fail too: Redis is away).
                super().close()
            raise


class RedisTransport(redis.Transport):
    Channel = RedisChannel
