"""Compact serialization without the applications' classes: Hazelcast 5's format for
application objects, read and written by schema.

A Compact value carries a schema id; the schema (a type name and its fields, each with a name and
a :class:`~hazelcast.serialization.api.FieldKind`) is replicated across the cluster and fetched by
id by any client (:mod:`.schemas`). So a record another application wrote (a Java ``Order``
record, a nested ``Address``) is read here field by field into Spark values, a partition's values
a column at a time (:mod:`.reader`), and rows are written as Compact records of a type name the
user chooses, their schemas registered with the cluster before the data (:mod:`.writer`). The
mapping of kinds to Spark types is :mod:`.kinds`.
"""
