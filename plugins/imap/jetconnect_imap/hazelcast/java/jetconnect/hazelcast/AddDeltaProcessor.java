package jetconnect.hazelcast;

import com.hazelcast.map.EntryProcessor;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.IdentifiedDataSerializable;

import java.io.IOException;
import java.util.Map;

/**
 * Adds a long delta to an entry's numeric value, on the member that owns the key (and, as the
 * backup processor, on its backup), so that concurrent increments never lose one another as a
 * client-side read-modify-write would. A missing entry counts as 0. The new value is stored as a
 * Long (what every client reads as a 64-bit integer) and returned.
 * A value that is not a number fails the call with an IllegalArgumentException naming its type:
 * silently replacing a value that another writer put is worse than an error.
 */
public final class AddDeltaProcessor
        implements EntryProcessor<Object, Object, Long>, IdentifiedDataSerializable {

    private long delta;

    public AddDeltaProcessor() {
    }

    public AddDeltaProcessor(long delta) {
        this.delta = delta;
    }

    @Override
    public Long process(Map.Entry<Object, Object> entry) {
        Object value = entry.getValue();
        long current;
        if (value == null) {
            current = 0L;
        } else if (value instanceof Long || value instanceof Integer || value instanceof Short
                || value instanceof Byte) {
            current = ((Number) value).longValue();
        } else {
            throw new IllegalArgumentException("AddDeltaProcessor: the value of key " + entry.getKey()
                    + " is a " + value.getClass().getName() + ", not an integer");
        }
        Long updated = Math.addExact(current, delta);
        entry.setValue(updated);
        return updated;
    }

    @Override
    public int getFactoryId() {
        return JetconnectSerializableFactory.FACTORY_ID;
    }

    @Override
    public int getClassId() {
        return JetconnectSerializableFactory.ADD_DELTA;
    }

    @Override
    public void writeData(ObjectDataOutput out) throws IOException {
        out.writeLong(delta);
    }

    @Override
    public void readData(ObjectDataInput in) throws IOException {
        delta = in.readLong();
    }
}
