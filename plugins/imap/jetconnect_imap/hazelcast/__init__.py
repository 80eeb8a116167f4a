"""The Hazelcast backend: jetconnect as a client of a Hazelcast 5 cluster (``hazelcast://...``).

:mod:`.backend` is the connectors' side of it; below it, one module per concern: the client per
cluster and process (:mod:`.clients`), values as every client reads them (:mod:`.values`),
whole columns serialised at once (:mod:`.bulk`), the protocol messages the Python client lacks
(:mod:`.codecs`), sending them (:mod:`.invocation`), decoding what comes back (:mod:`.decoding`),
partition iteration (:mod:`.iteration`), journals (:mod:`.journal`), JCache calls
(:mod:`.caches`), Spark filters as predicates (:mod:`.pushdown`) and jetconnect's entry
processors (:mod:`.processors`).
"""
