import * as grpc from "@grpc/grpc-js";
import {
  create,
  fromBinary,
  toBinary,
  type DescMessage,
  type DescMethodStreaming,
  type DescMethodUnary,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { ScopeViolationSchema, type ScopeViolation } from "../../gen/acms/v1/errors_pb.js";
import { BadRequestSchema, type BadRequest } from "../../gen/google/rpc/error_details_pb.js";
import { StatusSchema, type Status } from "../../gen/google/rpc/status_pb.js";

/** A grpc-js call error with the details of its `grpc-status-details-bin` trailer decoded. */
export interface DecodedGrpcError {
  code: grpc.status;
  /** google.rpc.Status from the trailer (undefined when the server sent none). */
  status?: Status;
  scopeViolation?: ScopeViolation;
  badRequest?: BadRequest;
}

/** Decodes the google.rpc.Status trailer of a grpc-js error and the acms details inside it. */
export function decodeGrpcError(err: grpc.ServiceError): DecodedGrpcError {
  const [raw] = err.metadata?.get("grpc-status-details-bin") ?? [];
  if (raw === undefined) return { code: err.code };
  const status = fromBinary(StatusSchema, typeof raw === "string" ? Buffer.from(raw, "base64") : raw);
  let scopeViolation: ScopeViolation | undefined;
  let badRequest: BadRequest | undefined;
  for (const any of status.details) {
    scopeViolation ??= anyUnpack(any, ScopeViolationSchema);
    badRequest ??= anyUnpack(any, BadRequestSchema);
  }
  return { code: err.code, status, scopeViolation, badRequest };
}

function pathOf(method: { parent: { typeName: string }; name: string }): string {
  return `/${method.parent.typeName}/${method.name}`;
}

function serializer<D extends DescMessage>(schema: D): (m: MessageShape<D>) => Buffer {
  return (m) => Buffer.from(toBinary(schema, m));
}

function deserializer<D extends DescMessage>(schema: D): (b: Buffer) => MessageShape<D> {
  return (b) => fromBinary(schema, b);
}

/**
 * A schema-less grpc-js client (`new grpc.Client` + makeUnaryRequest/makeServerStreamRequest) that
 * serializes with protobuf-es: what a team that only has grpc-js and our descriptors would write.
 */
export class GrpcJsGenericClient {
  readonly client: grpc.Client;

  constructor(address: string) {
    this.client = new grpc.Client(address, grpc.credentials.createInsecure());
  }

  static metadata(key?: string, scopeId?: string): grpc.Metadata {
    const md = new grpc.Metadata();
    if (key !== undefined) md.set("authorization", `Bearer ${key}`);
    if (scopeId !== undefined) md.set("acms-scope", scopeId);
    return md;
  }

  /** One unary call; rejects with the grpc-js ServiceError. */
  unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    input: MessageInitShape<I>,
    md: grpc.Metadata = new grpc.Metadata(),
  ): Promise<MessageShape<O>> {
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        pathOf(method),
        serializer(method.input),
        deserializer(method.output),
        create(method.input, input),
        md,
        (err, res) => (err ? reject(err) : resolve(res as MessageShape<O>)),
      );
    });
  }

  /** Opens a server stream. */
  serverStream<I extends DescMessage, O extends DescMessage>(
    method: DescMethodStreaming<I, O>,
    input: MessageInitShape<I>,
    md: grpc.Metadata = new grpc.Metadata(),
  ): grpc.ClientReadableStream<MessageShape<O>> {
    return this.client.makeServerStreamRequest(
      pathOf(method),
      serializer(method.input),
      deserializer(method.output),
      create(method.input, input),
      md,
    );
  }

  /** Sends `inputs` on a client stream and resolves with the one response. */
  clientStream<I extends DescMessage, O extends DescMessage>(
    method: DescMethodStreaming<I, O>,
    inputs: MessageInitShape<I>[],
    md: grpc.Metadata = new grpc.Metadata(),
  ): Promise<MessageShape<O>> {
    return new Promise((resolve, reject) => {
      const call = this.client.makeClientStreamRequest(
        pathOf(method),
        serializer(method.input),
        deserializer(method.output),
        md,
        (err, res) => (err ? reject(err) : resolve(res as MessageShape<O>)),
      );
      for (const input of inputs) call.write(create(method.input, input));
      call.end();
    });
  }

  /** Opens a bidi stream. */
  bidiStream<I extends DescMessage, O extends DescMessage>(
    method: DescMethodStreaming<I, O>,
    md: grpc.Metadata = new grpc.Metadata(),
  ): grpc.ClientDuplexStream<MessageShape<I>, MessageShape<O>> {
    return this.client.makeBidiStreamRequest(pathOf(method), serializer(method.input), deserializer(method.output), md);
  }

  close(): void {
    this.client.close();
  }
}

/** The decoded error of a call that must fail. */
export async function grpcFailure(p: Promise<unknown>): Promise<DecodedGrpcError> {
  try {
    await p;
  } catch (err) {
    return decodeGrpcError(err as grpc.ServiceError);
  }
  throw new Error("expected the call to fail");
}
