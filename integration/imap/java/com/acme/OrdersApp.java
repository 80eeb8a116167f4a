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
