// The Java side of integration/kafka/test_java_serializers.py: Kafka's own serializers, as a Java
// service uses them. Compiled in the test against the broker's kafka-clients jar.
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.*;

public class JavaSerdes {
    public static void main(String[] args) throws Exception {
        String mode = args[0], bootstrap = args[1], topic = args[2];
        if (mode.equals("produce-int-double")) {
            try (KafkaProducer<Integer, Double> p = new KafkaProducer<>(props(bootstrap), new IntegerSerializer(), new DoubleSerializer())) {
                int[] keys = {0, 1, -1, Integer.MIN_VALUE, Integer.MAX_VALUE};
                for (int i = 0; i < keys.length; i++) p.send(new ProducerRecord<>(topic, 0, keys[i], i + 0.5)).get();
                p.send(new ProducerRecord<>(topic, 0, null, -0.0)).get();  // a null key
                p.send(new ProducerRecord<Integer, Double>(topic, 0, 7, null)).get();  // a null value (a tombstone)
            }
        } else if (mode.equals("produce-long-uuid")) {
            try (KafkaProducer<Long, UUID> p = new KafkaProducer<>(props(bootstrap), new LongSerializer(), new UUIDSerializer())) {
                long[] keys = {0L, -2L, Long.MIN_VALUE, Long.MAX_VALUE, 1L << 40};
                for (int i = 0; i < keys.length; i++) p.send(new ProducerRecord<>(topic, 0, keys[i], new UUID(i, -i))).get();
            }
        } else if (mode.equals("consume-short-float")) {
            Properties c = props(bootstrap);
            c.put("isolation.level", "read_committed");
            try (KafkaConsumer<Short, Float> consumer = new KafkaConsumer<>(c, new ShortDeserializer(), new FloatDeserializer())) {
                TopicPartition tp = new TopicPartition(topic, 0);
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                long end = consumer.endOffsets(List.of(tp)).get(tp);
                long deadline = System.currentTimeMillis() + 60_000;
                while (consumer.position(tp) < end && System.currentTimeMillis() < deadline) {
                    for (ConsumerRecord<Short, Float> r : consumer.poll(Duration.ofMillis(500))) {
                        System.out.println(r.key() + "\t" + r.value());
                    }
                }
            }
        }
    }

    static Properties props(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        return p;
    }
}
