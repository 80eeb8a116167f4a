package jetconnect.hazelcast;

import com.hazelcast.nio.serialization.DataSerializableFactory;
import com.hazelcast.nio.serialization.IdentifiedDataSerializable;

/**
 * The factory the members know jetconnect's entry processors by (hz.yaml's
 * serialization.data-serializable-factories). A client sends (factory id, class id, fields);
 * the member builds the processor here and reads its fields. The ids are mirrored in
 * plugins/imap/jetconnect_imap/hazelcast/processors.py: change both together.
 */
public final class JetconnectSerializableFactory implements DataSerializableFactory {

    /** Positive: Hazelcast's own factories are negative. Unlikely to clash with a user's. */
    public static final int FACTORY_ID = 7301;

    public static final int ADD_DELTA = 1;
    public static final int SET_VALUE = 2;

    @Override
    public IdentifiedDataSerializable create(int typeId) {
        switch (typeId) {
            case ADD_DELTA:
                return new AddDeltaProcessor();
            case SET_VALUE:
                return new SetValueProcessor();
            default:
                // null makes Hazelcast raise a HazelcastSerializationException naming the ids.
                return null;
        }
    }
}
