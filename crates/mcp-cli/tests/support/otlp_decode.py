"""Decodes what an OTLP/HTTP exporter posted, with the official definitions
(the `opentelemetry-proto` package on PyPI): argv holds `KIND FORMAT PATH`
triples (KIND `traces` or `metrics`, FORMAT `protobuf` or `json`). Prints
one JSON summary: every span (name, kind, trace and span id, parent, string
and int attributes), every metric (name, unit, histogram point count) and
the service names."""
import json
import sys

from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)


def value(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def attributes(pairs):
    return {pair.key: value(pair.value) for pair in pairs}


def decode(message_type, fmt, path):
    data = open(path, "rb").read()
    message = message_type()
    if fmt == "protobuf":
        message.ParseFromString(data)
    else:
        json_format.Parse(data.decode("utf-8"), message)
    return message


summary = {"spans": [], "metrics": [], "services": []}
args = sys.argv[1:]
for kind, fmt, path in zip(args[0::3], args[1::3], args[2::3]):
    if kind == "traces":
        request = decode(ExportTraceServiceRequest, fmt, path)
        for resource_spans in request.resource_spans:
            summary["services"].append(
                attributes(resource_spans.resource.attributes).get("service.name"))
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    summary["spans"].append({
                        "scope": scope_spans.scope.name,
                        "name": span.name,
                        "kind": span.kind,
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "status": span.status.code,
                        "attributes": attributes(span.attributes),
                    })
    else:
        request = decode(ExportMetricsServiceRequest, fmt, path)
        for resource_metrics in request.resource_metrics:
            summary["services"].append(
                attributes(resource_metrics.resource.attributes).get("service.name"))
            for scope_metrics in resource_metrics.scope_metrics:
                for metric in scope_metrics.metrics:
                    points = metric.histogram.data_points
                    summary["metrics"].append({
                        "name": metric.name,
                        "unit": metric.unit,
                        "count": sum(point.count for point in points),
                        "attributes": [attributes(point.attributes) for point in points],
                    })
print(json.dumps(summary))
