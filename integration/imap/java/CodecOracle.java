import com.hazelcast.client.impl.protocol.ClientMessage;
import com.hazelcast.client.impl.protocol.ClientMessageWriter;
import com.hazelcast.client.impl.protocol.codec.CacheEventJournalReadCodec;
import com.hazelcast.client.impl.protocol.codec.CacheEventJournalSubscribeCodec;
import com.hazelcast.client.impl.protocol.codec.CacheGetConfigCodec;
import com.hazelcast.client.impl.protocol.codec.CacheIterateEntriesCodec;
import com.hazelcast.client.impl.protocol.codec.CachePutAllCodec;
import com.hazelcast.client.impl.protocol.codec.MapEventJournalReadCodec;
import com.hazelcast.client.impl.protocol.codec.MapEventJournalSubscribeCodec;
import com.hazelcast.client.impl.protocol.codec.MapFetchEntriesCodec;
import com.hazelcast.client.impl.protocol.codec.MapPutAllCodec;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.internal.serialization.impl.HeapData;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.AbstractMap.SimpleEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The member jar's own codecs of the messages jetconnect encodes and decodes itself
 * (plugins/imap/jetconnect_imap/hazelcast/codecs): one line per case, "name hex", the message's
 * bytes as Hazelcast's ClientMessageWriter puts them on the wire. integration/imap/test_hz_codecs.py
 * encodes the same requests in Python and compares bytes, and decodes these responses.
 */
public final class CodecOracle {
    /** A Data of a String, as any client serialises it: partition hash 0, type -11, length, UTF-8. */
    static Data text(String value) {
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        ByteBuffer buf = ByteBuffer.allocate(12 + utf8.length);
        buf.putInt(0).putInt(-11).putInt(utf8.length).put(utf8);
        return new HeapData(buf.array());
    }

    static List<Map.Entry<Integer, Integer>> pointers() {
        List<Map.Entry<Integer, Integer>> out = new ArrayList<>();
        out.add(new SimpleEntry<>(Integer.MAX_VALUE, -1));
        out.add(new SimpleEntry<>(5, 7));
        return out;
    }

    static List<Map.Entry<Data, Data>> entries() {
        List<Map.Entry<Data, Data>> out = new ArrayList<>();
        out.add(new SimpleEntry<>(text("k1"), text("v1")));
        out.add(new SimpleEntry<>(text("ключ"), text("")));
        return out;
    }

    static void print(String name, ClientMessage message) {
        ByteBuffer buf = ByteBuffer.allocate(1 << 16);
        if (!new ClientMessageWriter().writeTo(buf, message)) {
            throw new IllegalStateException(name + " did not fit");
        }
        buf.flip();
        StringBuilder hex = new StringBuilder();
        while (buf.hasRemaining()) {
            hex.append(String.format("%02x", buf.get()));
        }
        System.out.println(name + " " + hex);
    }

    public static void main(String[] args) {
        String name = "m-ä \"q\"";
        List<Data> items = new ArrayList<>();
        items.add(text("e1"));
        items.add(text("e2"));
        print("map_fetch_entries.request", MapFetchEntriesCodec.encodeRequest(name, pointers(), 2048));
        print("map_fetch_entries.response", MapFetchEntriesCodec.encodeResponse(pointers(), entries()));
        print("cache_iterate_entries.request", CacheIterateEntriesCodec.encodeRequest("/hz/" + name, pointers(), 7));
        print("cache_iterate_entries.response", CacheIterateEntriesCodec.encodeResponse(pointers(), entries()));
        print("map_event_journal_subscribe.request", MapEventJournalSubscribeCodec.encodeRequest(name));
        print("map_event_journal_subscribe.response", MapEventJournalSubscribeCodec.encodeResponse(3L, 1L << 40));
        print("cache_event_journal_subscribe.request", CacheEventJournalSubscribeCodec.encodeRequest("/hz/" + name));
        print("cache_event_journal_subscribe.response", CacheEventJournalSubscribeCodec.encodeResponse(0L, -1L));
        print("map_event_journal_read.request", MapEventJournalReadCodec.encodeRequest(name, 1L << 33, 0, 10_000, null, null));
        print("map_event_journal_read.response", MapEventJournalReadCodec.encodeResponse(2, items, new long[] {8L, 9L}, 10L));
        print("map_event_journal_read.response-no-seqs", MapEventJournalReadCodec.encodeResponse(2, items, null, 10L));
        print("cache_event_journal_read.request", CacheEventJournalReadCodec.encodeRequest("/hz/" + name, 5L, 1, 2, null, null));
        print("cache_event_journal_read.response", CacheEventJournalReadCodec.encodeResponse(2, items, new long[] {8L, 9L}, 10L));
        print("map_put_all.request", MapPutAllCodec.encodeRequest(name, entries(), false));
        print("cache_put_all.request", CachePutAllCodec.encodeRequest("/hz/" + name, entries(), null, -1));
        print("cache_get_config.request", CacheGetConfigCodec.encodeRequest("/hz/" + name, name));
        print("cache_get_config.response-null", CacheGetConfigCodec.encodeResponse(null));
    }
}
