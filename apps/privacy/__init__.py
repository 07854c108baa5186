"""The end users' privacy portal (self-service). A top layer: nothing imports it."""
