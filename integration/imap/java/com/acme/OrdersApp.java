package com.acme;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A Java client of the cluster, written as an application would write it (zero-config Compact):
 *
 *   OrdersApp write CLUSTER MEMBERS MAP COUNT   puts Order.number(i) under key i, i < COUNT
 *   OrdersApp read CLUSTER MEMBERS MAP          prints every order of MAP as Order.line(), by id
 *   OrdersApp events CLUSTER MEMBERS MAP        puts Event 1 at 2026-12-01T12:00 and Event 2 in the year 10000
 */
public final class OrdersApp {
    public static void main(String[] args) {
        System.setProperty("hazelcast.logging.type", "none");
        ClientConfig config = new ClientConfig();
        config.setClusterName(args[1]);
        for (String member : args[2].split(",")) {
            config.getNetworkConfig().addAddress(member);
        }
        HazelcastInstance client = HazelcastClient.newHazelcastClient(config);
        try {
            if (args[0].equals("events")) {
                IMap<Long, Event> events = client.getMap(args[3]);
                events.put(1L, new Event(1, java.time.LocalDateTime.of(2026, 12, 1, 12, 0)));
                events.put(2L, new Event(2, java.time.LocalDateTime.of(10000, 1, 1, 0, 0)));
                System.out.println("wrote 2");
                return;
            }
            IMap<Long, Order> map = client.getMap(args[3]);
            if (args[0].equals("write")) {
                long count = Long.parseLong(args[4]);
                Map<Long, Order> batch = new HashMap<>();
                for (long i = 0; i < count; i++) {
                    batch.put(i, Order.number(i));
                    if (batch.size() == 2000) {
                        map.putAll(batch);
                        batch.clear();
                    }
                }
                map.putAll(batch);
                System.out.println("wrote " + count);
            } else {
                List<Order> orders = new ArrayList<>(map.values());
                orders.sort((a, b) -> Long.compare(a.id(), b.id()));
                StringBuilder out = new StringBuilder();
                for (Order order : orders) {
                    out.append(order.line()).append('\n');
                }
                System.out.print(out);
            }
        } finally {
            client.shutdown();
        }
    }
}
