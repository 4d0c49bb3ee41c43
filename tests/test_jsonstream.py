"""The splitter cuts traceEvents into chunks of whole events that cover the array exactly."""
import json

from tracesql.ingest.jsonstream import BLOCK_SIZE, ByteSource, TraceSplitter


def test_chunks_cover_the_events_exactly_at_their_offsets(tmp_path):
    events = [{"ph": "X", "cat": "cpu_op", "name": f"op{i}" if i % 89 else 'x}, {"y', "pid": 1, "tid": 1,
               "ts": i, "dur": 1, "args": {"Input Dims": [[i % 7, 3]]}} for i in range(120_000)]
    body = b",\n  ".join(json.dumps(e).encode() for e in events)
    doc = b'{"schemaVersion": 1, "traceEvents": [\n  ' + body + b'\n], "traceName": "t"}'
    assert len(doc) > 3 * BLOCK_SIZE
    f = tmp_path / "t.json"
    f.write_bytes(doc)
    sp = TraceSplitter(ByteSource(str(f)), chunk_size=2 << 20)
    chunks = list(sp.chunks())
    assert len(chunks) >= 3 and any(len(c.pieces) > 1 for c in chunks)
    for c in chunks:  # each chunk is the document's text at its offset, and parses as a list of events
        assert doc[c.offset:c.offset + len(c.data)] == c.data
    got = [e for c in chunks for e in json.loads(b"[" + c.data + b"]")]
    assert got == events
    assert sp.header == {"schemaVersion": 1, "traceName": "t"}
