/**
 * Request and answer types of each operation, read from the generated `operations` interface
 * (openapi.ts) by operationId, so the methods stay as typed as the OpenAPI document.
 */
import type { operations } from './openapi.js';

export type OperationId = keyof operations;

type SuccessStatus = 200 | 201 | 202 | 204;
type Responses<K extends OperationId> = operations[K]['responses'];
type JsonContent<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type SuccessJson<K extends OperationId> = JsonContent<Responses<K>[keyof Responses<K> & SuccessStatus]>;

/** What the operation's success envelope carries in `data`. */
export type Data<K extends OperationId> = SuccessJson<K> extends { data: infer D } ? D : never;
/** One item of a list operation's `data`. */
export type Item<K extends OperationId> = Data<K> extends ReadonlyArray<infer T> ? T : never;
/** The operation's query parameters. */
export type Query<K extends OperationId> = NonNullable<operations[K]['parameters']['query']>;
/** The operation's JSON request body. */
export type Body<K extends OperationId> = JsonContent<NonNullable<operations[K]['requestBody']>>;
