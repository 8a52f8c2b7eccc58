import { create, createRegistry, fromBinary, toBinary, type DescFile, type Registry } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, type ConnectRouter } from "@connectrpc/connect";
import { file_acms_v1_errors } from "../../../gen/acms/v1/errors_pb.js";
import { file_google_rpc_error_details } from "../../../gen/google/rpc/error_details_pb.js";
import { file_google_rpc_status } from "../../../gen/google/rpc/status_pb.js";
import {
  ServerReflection as ServerReflectionV1,
  ServerReflectionRequestSchema as RequestV1Schema,
  ServerReflectionResponseSchema as ResponseV1Schema,
  ErrorResponseSchema,
  ExtensionNumberResponseSchema,
  FileDescriptorResponseSchema,
  ListServiceResponseSchema,
  ServiceResponseSchema,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
} from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import {
  ServerReflection as ServerReflectionV1alpha,
  ServerReflectionRequestSchema as RequestV1alphaSchema,
  ServerReflectionResponseSchema as ResponseV1alphaSchema,
} from "../../../gen/grpc/reflection/v1alpha/reflection_pb.js";

/**
 * Files no service imports but every client needs: the error details (ScopeViolation, BadRequest) and
 * google.rpc.Status, so `buf curl` and reflection clients can decode `grpc-status-details-bin`.
 */
const DETAIL_FILES: readonly DescFile[] = [file_acms_v1_errors, file_google_rpc_status, file_google_rpc_error_details];

/** The descriptors of every service a router serves, indexed for reflection look-ups. */
interface ReflectionIndex {
  serviceNames: string[];
  /** Every file the services need, transitively, by file name (`acms/v1/scope.proto`). */
  files: Map<string, DescFile>;
  registry: Registry;
}

function buildIndex(router: ConnectRouter): ReflectionIndex {
  const services = [...new Map(router.handlers.map((h) => [h.service.typeName, h.service])).values()];
  const files = new Map<string, DescFile>();
  const visit = (file: DescFile) => {
    if (files.has(file.proto.name)) return;
    files.set(file.proto.name, file);
    file.dependencies.forEach(visit);
  };
  services.forEach((s) => visit(s.file));
  DETAIL_FILES.forEach(visit);
  return {
    serviceNames: services.map((s) => s.typeName).sort(),
    files,
    registry: createRegistry(...files.values()),
  };
}

/** The file that declares `symbol`: a service, method, message, field, oneof, enum, enum value or extension. */
function fileOfSymbol(index: ReflectionIndex, symbol: string): DescFile | undefined {
  const direct = index.registry.get(symbol);
  if (direct) return direct.file;
  const dot = symbol.lastIndexOf(".");
  if (dot <= 0) return undefined;
  const scope = symbol.slice(0, dot);
  const member = symbol.slice(dot + 1);
  const parent = index.registry.get(scope);
  if (parent?.kind === "service" && parent.methods.some((m) => m.name === member)) return parent.file;
  if (parent?.kind === "message" && (parent.fields.some((f) => f.name === member) || parent.oneofs.some((o) => o.name === member))) {
    return parent.file;
  }
  // Enum values live in the scope enclosing their enum (`acms.v1.REF_KIND_PROJECT`); `Enum.VALUE` is accepted too.
  if (parent?.kind === "enum" && parent.values.some((v) => v.name === member)) return parent.file;
  for (const t of index.registry) {
    if (t.kind === "enum" && t.typeName.slice(0, t.typeName.lastIndexOf(".")) === scope && t.values.some((v) => v.name === member))
      return t.file;
  }
  return undefined;
}

/**
 * `file` followed by those of its transitive dependencies this stream has not sent yet (each after its
 * own dependencies), as serialized FileDescriptorProtos. The requested file is always sent and comes
 * first, as grpc-go does.
 */
function withDependencies(file: DescFile, sent: Set<string>): Uint8Array[] {
  const deps: Uint8Array[] = [];
  sent.add(file.proto.name);
  const visit = (f: DescFile) => {
    if (sent.has(f.proto.name)) return;
    sent.add(f.proto.name);
    f.dependencies.forEach(visit);
    deps.push(toBinary(FileDescriptorProtoSchema, f.proto));
  };
  file.dependencies.forEach(visit);
  return [toBinary(FileDescriptorProtoSchema, file.proto), ...deps];
}

function errorResponse(code: Code, message: string): ServerReflectionResponse["messageResponse"] {
  return { case: "errorResponse", value: create(ErrorResponseSchema, { errorCode: code, errorMessage: message }) };
}

function filesResponse(files: Uint8Array[]): ServerReflectionResponse["messageResponse"] {
  return { case: "fileDescriptorResponse", value: create(FileDescriptorResponseSchema, { fileDescriptorProto: files }) };
}

/** Answers one reflection request; unknown names are an in-band NOT_FOUND, the stream goes on. */
function answer(index: ReflectionIndex, req: ServerReflectionRequest, sent: Set<string>): ServerReflectionResponse {
  const r = req.messageRequest;
  let messageResponse: ServerReflectionResponse["messageResponse"];
  switch (r.case) {
    case "listServices":
      messageResponse = {
        case: "listServicesResponse",
        value: create(ListServiceResponseSchema, {
          service: index.serviceNames.map((name) => create(ServiceResponseSchema, { name })),
        }),
      };
      break;
    case "fileByFilename": {
      const file = index.files.get(r.value);
      messageResponse = file
        ? filesResponse(withDependencies(file, sent))
        : errorResponse(Code.NotFound, `file not found: ${r.value.slice(0, 200)}`);
      break;
    }
    case "fileContainingSymbol": {
      const file = fileOfSymbol(index, r.value);
      messageResponse = file
        ? filesResponse(withDependencies(file, sent))
        : errorResponse(Code.NotFound, `symbol not found: ${r.value.slice(0, 200)}`);
      break;
    }
    case "fileContainingExtension": {
      const extendee = index.registry.getMessage(r.value.containingType);
      const ext = extendee ? index.registry.getExtensionFor(extendee, r.value.extensionNumber) : undefined;
      messageResponse = ext
        ? filesResponse(withDependencies(ext.file, sent))
        : errorResponse(Code.NotFound, `extension ${r.value.extensionNumber} of ${r.value.containingType.slice(0, 200)} not found`);
      break;
    }
    case "allExtensionNumbersOfType": {
      const typeName = r.value;
      if (!index.registry.getMessage(typeName)) {
        messageResponse = errorResponse(Code.NotFound, `type not found: ${typeName.slice(0, 200)}`);
        break;
      }
      const numbers: number[] = [];
      for (const t of index.registry) if (t.kind === "extension" && t.extendee.typeName === typeName) numbers.push(t.number);
      messageResponse = {
        case: "allExtensionNumbersResponse",
        value: create(ExtensionNumberResponseSchema, { baseTypeName: typeName, extensionNumber: numbers.sort((a, b) => a - b) }),
      };
      break;
    }
    default:
      messageResponse = errorResponse(Code.InvalidArgument, "empty reflection request: set one of the message_request fields");
  }
  return create(ResponseV1Schema, { validHost: req.host, originalRequest: req, messageResponse });
}

/**
 * gRPC server reflection (grpc.reflection.v1 and v1alpha) over every service the router serves, so
 * `buf curl`, grpcurl and Python clients discover the API with no schema at hand. The index is built
 * on the first call, once every route is registered. The two versions are wire-identical, so v1alpha
 * messages are re-read as v1.
 * @example router => reflectionRoutes()(router)
 */
export function reflectionRoutes(): (router: ConnectRouter) => void {
  return (router) => {
    let index: ReflectionIndex | undefined;
    const indexOf = () => (index ??= buildIndex(router));

    router.service(ServerReflectionV1, {
      async *serverReflectionInfo(requests) {
        const sent = new Set<string>();
        for await (const req of requests) yield answer(indexOf(), req, sent);
      },
    });
    router.service(ServerReflectionV1alpha, {
      async *serverReflectionInfo(requests) {
        const sent = new Set<string>();
        for await (const req of requests) {
          const v1 = fromBinary(RequestV1Schema, toBinary(RequestV1alphaSchema, req));
          yield fromBinary(ResponseV1alphaSchema, toBinary(ResponseV1Schema, answer(indexOf(), v1, sent)));
        }
      },
    });
  };
}
