package com.acme;

/**
 * An application's own object, as a Java service stores it in an IMap: Hazelcast's zero-config
 * Compact makes it the type com.acme.Order (fields by record component: long -> INT64, Long ->
 * NULLABLE_INT64, String[] -> ARRAY_OF_STRING, Address -> COMPACT, boolean -> BOOLEAN).
 */
public record Order(long id, String customer, double amount, Long discount, String[] tags, Address address, boolean paid) {

    /** Order number i as integration/imap/test_compact_interop.py's expected_order(i) computes it. */
    public static Order number(long i) {
        String customer = i % 7 == 0 ? "Zoë \"" + i + "\"" : "customer-" + i;
        Long discount = i % 3 == 0 ? null : i * 10;
        String[] tags = i % 4 == 0 ? null : new String[] {"t" + (i % 10), i % 2 == 0 ? null : "odd"};
        Address address = i % 5 == 0 ? null : new Address("street " + i, i % 2 == 0 ? "Zürich" : "Bern", 8000 + (int) (i % 1000));
        return new Order(i, customer, i * 0.25, discount, tags, address, i % 2 == 0);
    }

    /** One line per order, the same whoever wrote it: what the test compares. */
    public String line() {
        StringBuilder out = new StringBuilder();
        out.append(id).append('|').append(customer).append('|').append(amount).append('|').append(discount).append('|');
        if (tags == null) {
            out.append("null");
        } else {
            out.append(String.join(",", java.util.Arrays.stream(tags).map(String::valueOf).toList()));
        }
        out.append('|');
        out.append(address == null ? "null" : address.street() + "/" + address.city() + "/" + address.zip());
        return out.append('|').append(paid).toString();
    }
}
