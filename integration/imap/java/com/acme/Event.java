package com.acme;

import java.time.LocalDateTime;

/** A record with a timestamp Java holds and Spark may not (years past 9999). */
public record Event(long id, LocalDateTime at) {}
