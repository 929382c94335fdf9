import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import fastJson from 'fast-json-stringify';
import { isDeepStrictEqual } from 'node:util';

type Serializer = (payload: unknown) => string;

/**
 * A hot route's success body is written by a serializer compiled (fast-json-stringify) from
 * its DTO's schema in the OpenAPI document, instead of JSON.stringify. Error bodies keep
 * JSON.stringify. The DTO's schema must describe everything the route answers: with
 * `verify` (tests), each body is also checked to read back exactly as JSON.stringify's
 * would, and a difference is a 500.
 */
export function FastJson(dto: { name: string }): MethodDecorator {
  FAST_JSON_DTOS.add(dto.name);
  return RouteConfig({ fastJson: dto.name });
}

/** Every DTO named by `@FastJson`. */
export const FAST_JSON_DTOS = new Set<string>();

/** The compiled serializers, by DTO name: hooked into Fastify first, given the OpenAPI document once it exists. */
export class FastJsonSerializers {
  private readonly compiled = new Map<string, Serializer>();
  private components?: Record<string, unknown>;
  private verify = false;

  /** Before routes are added: the hook that picks a route's serializer for its success bodies. */
  hook(fastify: FastifyInstance): void {
    fastify.addHook('preSerialization', async (request, reply, payload) => {
      const name = (request.routeOptions.config as { fastJson?: string } | undefined)?.fastJson;
      if (name && reply.statusCode < 300) reply.serializer(this.serializerOf(name));
      return payload;
    });
  }

  /** The document's schemas; every `@FastJson` DTO is compiled now, so a missing schema fails at start-up. */
  load(components: Record<string, unknown>, names: string[], options: { verify: boolean }): void {
    this.components = components;
    this.verify = options.verify;
    for (const name of names) this.serializerOf(name);
  }

  private serializerOf(name: string): Serializer {
    let serializer = this.compiled.get(name);
    if (!serializer) {
      if (!(this.components?.schemas as Record<string, unknown> | undefined)?.[name]) {
        throw new Error(`FastJson: no schema named ${name} in the OpenAPI document`);
      }
      const fast = fastJson({ $ref: `#/components/schemas/${name}`, components: this.components } as never);
      serializer = this.verify ? verified(name, fast) : fast;
      this.compiled.set(name, serializer);
    }
    return serializer;
  }
}

function verified(name: string, fast: Serializer): Serializer {
  return (payload) => {
    const text = fast(payload);
    if (!isDeepStrictEqual(JSON.parse(text), JSON.parse(JSON.stringify(payload)))) {
      throw new Error(`FastJson: the ${name} schema does not describe this body: ${JSON.stringify(payload)}`);
    }
    return text;
  };
}
