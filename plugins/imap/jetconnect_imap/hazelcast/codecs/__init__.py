"""Codecs of the Hazelcast client-protocol messages that hazelcast-python-client 5.7 does not ship,
one module per message in the shape of the client's own generated codecs
(``hazelcast/protocol/codec/*_codec.py``): the message type and every fixed-size field's offset as
named constants, then ``encode_request(...)`` and ``decode_response(msg)``, nothing else.

Written from Hazelcast's protocol definitions (``hazelcast/hazelcast-client-protocol``,
``protocol-definitions/Map.yaml`` and ``Cache.yaml``) and checked byte for byte against the
codecs of the member jar itself (``com.hazelcast.client.impl.protocol.codec.*Codec``, in
``integration/imap/test_hz_codecs.py``). Keys, values and journal items stay serialised ``Data``
here; decoding them is :mod:`jetconnect_imap.hazelcast.decoding`'s job, sending
:mod:`jetconnect_imap.hazelcast.invocation`'s.

========================================= ========= =====================================
module                                    type      message
========================================= ========= =====================================
:mod:`.map_fetch_entries`                 0x013800  ``Map.fetchEntries``
:mod:`.map_put_all`                       0x012C00  ``Map.putAll`` (of serialised pairs)
:mod:`.map_event_journal_subscribe`       0x014100  ``Map.eventJournalSubscribe``
:mod:`.map_event_journal_read`            0x014200  ``Map.eventJournalRead``
:mod:`.cache_create_config`               0x130600  ``Cache.createConfig``
:mod:`.cache_get_config`                  0x130C00  ``Cache.getConfig``
:mod:`.cache_put_all`                     0x131B00  ``Cache.putAll``
:mod:`.cache_iterate_entries`             0x131C00  ``Cache.iterateEntries``
:mod:`.cache_event_journal_subscribe`     0x131F00  ``Cache.eventJournalSubscribe``
:mod:`.cache_event_journal_read`          0x132000  ``Cache.eventJournalRead``
========================================= ========= =====================================
"""
