"""The files family, written once over a :class:`FileSystem`: what the files and HDFS plugins build on.

- :mod:`~jetconnect._files.filesystem`: the :class:`FileSystem` protocol and :class:`LocalFileSystem`;
- :mod:`~jetconnect._files.line_splits`: byte-range splits of text files and reading their lines into Arrow;
- :mod:`~jetconnect._files.lines_source`: the lines of a directory's files, as a batch source;
- :mod:`~jetconnect._files.growing_files`: lines appended to a directory's files, as a replayable stream;
- :mod:`~jetconnect._files.whole_files`: whole files as rows, batch or a stream of new files;
- :mod:`~jetconnect._files.staged_commit` and :mod:`~jetconnect._files.sink`: exactly-once file sinks;
- :mod:`~jetconnect._files.batch_reader`, :mod:`~jetconnect._files.spark_text` and
  :mod:`~jetconnect._files.spark_avro`: when a batch read goes to Spark's own text or Avro reader;
- :mod:`~jetconnect._files.avro_schema`: the one mapping between Avro and Spark schemas.

Plugins reach these through :mod:`jetconnect.files_family` and :mod:`jetconnect.avro_schemas`
(and the protocol through :mod:`jetconnect.api`). This package imports nothing itself, so core
modules that only need the protocol (round records, spools) do not pay for pyarrow, numpy or
pyspark imports they never use.
"""
