"""The Bathtub HTTP service (aiohttp). Computes nothing itself: it calls `bathtub`."""
