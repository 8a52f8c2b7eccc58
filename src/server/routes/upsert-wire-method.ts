import { clone, createFileRegistry, type DescMessage, type DescMethodClientStreaming } from "@bufbuild/protobuf";
import { FieldDescriptorProto_Type, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { file_acms_v1_graph } from "../../../gen/acms/v1/graph_pb.js";
import { file_acms_v1_index, IndexService, type UpsertDocumentsResponseSchema } from "../../../gen/acms/v1/index_pb.js";
import { file_acms_v1_options } from "../../../gen/acms/v1/options_pb.js";

type WireMethod = DescMethodClientStreaming<DescMessage, typeof UpsertDocumentsResponseSchema>;

/**
 * IndexService.UpsertDocuments as the binary protocols read it: the same method, request type name and
 * field options (the access interceptor checks `resource_id` exactly as for the generated type), but
 * `documents` declared `repeated bytes`, which the wire format cannot tell from `repeated DocumentInput`
 * (both are length-delimited field 2). Decoding a message then only cuts it into one byte range per
 * document, which costs next to nothing; the documents themselves are decoded by the handler a slice at a
 * time (see decodeDocumentSlices), so a message of 20,000 documents never holds the serving thread for
 * the whole decode (connect-es decodes a message in one step before any handler or interceptor runs).
 */
function wireMethod(): WireMethod {
  const proto = clone(FileDescriptorProtoSchema, file_acms_v1_index.proto);
  const request = proto.messageType.find((m) => m.name === "UpsertDocumentsRequest");
  const documents = request?.field.find((f) => f.name === "documents");
  if (!documents) throw new Error("acms.v1.UpsertDocumentsRequest has no documents field");
  documents.type = FieldDescriptorProto_Type.BYTES;
  documents.typeName = "";
  const deps = [file_acms_v1_graph, file_acms_v1_options];
  const registry = createFileRegistry(proto, (name) => deps.find((f) => f.name === name.replace(/\.proto$/, "")));
  const method = registry.getService(IndexService.typeName)?.methods.find((m) => m.name === IndexService.method.upsertDocuments.name);
  if (method?.methodKind !== "client_streaming") throw new Error("acms.v1.IndexService.UpsertDocuments is missing from its file");
  return method as WireMethod;
}

/** UpsertDocuments with `documents` left as one encoded DocumentInput per entry. */
export const upsertDocumentsWireMethod: WireMethod = wireMethod();

/** The request type of `upsertDocumentsWireMethod`: `resource_id`, and `documents` as bytes. */
export const upsertDocumentsWireRequest: DescMessage = upsertDocumentsWireMethod.input;
