"""The model side: provider-neutral message and stream types (:mod:`.types`), the ``Model``
protocol (:mod:`.base`), the Anthropic Messages API client on the official SDK
(:mod:`.anthropic`; its request building in :mod:`.anthropic_request`, its stream decoding in
:mod:`.anthropic_stream`), model limits, and the scripted Messages-API server with its scenario
player used by tests and the demo.

Layering: may import only ``protocol`` (and the standard library, pydantic, the SDK); every
other package may import it.
"""
