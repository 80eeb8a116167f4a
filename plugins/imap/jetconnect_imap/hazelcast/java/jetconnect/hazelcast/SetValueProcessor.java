package jetconnect.hazelcast;

import com.hazelcast.map.EntryProcessor;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.IdentifiedDataSerializable;

import java.io.IOException;
import java.util.Map;

/**
 * Sets an entry's value (any object the member can deserialize: strings, numbers, byte arrays,
 * HazelcastJsonValue, ...) on the member that owns the key, and returns the value it replaced.
 * A null value removes the entry. Applying it twice leaves the same state: a replayed write is
 * harmless.
 */
public final class SetValueProcessor
        implements EntryProcessor<Object, Object, Object>, IdentifiedDataSerializable {

    private Object value;

    public SetValueProcessor() {
    }

    public SetValueProcessor(Object value) {
        this.value = value;
    }

    @Override
    public Object process(Map.Entry<Object, Object> entry) {
        Object old = entry.getValue();
        entry.setValue(value);
        return old;
    }

    @Override
    public int getFactoryId() {
        return JetconnectSerializableFactory.FACTORY_ID;
    }

    @Override
    public int getClassId() {
        return JetconnectSerializableFactory.SET_VALUE;
    }

    @Override
    public void writeData(ObjectDataOutput out) throws IOException {
        out.writeObject(value);
    }

    @Override
    public void readData(ObjectDataInput in) throws IOException {
        value = in.readObject();
    }
}
