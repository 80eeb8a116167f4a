package com.acme;

/** A nested record of {@link Order}: serialised by Hazelcast's zero-config Compact as com.acme.Address. */
public record Address(String street, String city, int zip) {}
