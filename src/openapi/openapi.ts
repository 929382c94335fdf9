import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { finalizeDocument } from './document-rules';
import { ErrorBodyDto } from './error-body.dto';
import { EVENT_DATA_MODELS, eventWebhooks } from './event-webhooks';

export { ACCESS_EXTENSION, PUBLIC_EXTENSION } from './document-rules';
export const JWT_SCHEME = 'jwt';
export const API_KEY_SCHEME = 'api_key';
export const MANAGE_TOKEN_SCHEME = 'manage_token';

/** The OpenAPI document, generated from the controllers' decorators. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Seller Payments Platform API')
    .setDescription(
      'REST API for sellers, their integrations and the admin panel: users and sessions, seller API keys, ' +
        'rate and split plans, unified transactions, virtual accounts, public checkout and subscriptions. ' +
        'Money is a decimal string in BRL ("150.00"); every error has the body `ErrorBody`; lists are cursor-paginated.',
    )
    .setVersion('1.0.0')
    .setLicense('Proprietary', 'https://example.com/license')
    .addServer('/', 'This server')
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'User access token from POST /user/login/.' },
      JWT_SCHEME,
    )
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: 'UUID', description: 'Seller API key (UUID4 secret).' },
      API_KEY_SCHEME,
    )
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'smt_ followed by 43 URL-safe characters',
        description:
          "A subscriber's manage token, from POST /subscriptions/plan/{plan_id}/subscribe/ (and the welcome e-mail).",
      },
      MANAGE_TOKEN_SCHEME,
    )
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    extraModels: [ErrorBodyDto, ...EVENT_DATA_MODELS],
    operationIdFactory: (controllerKey, methodKey) => `${controllerKey.replace(/Controller$/, '')}_${methodKey}`,
  });
  // The requests the service sends to sellers' webhook endpoints, one per event type.
  return { ...finalizeDocument(document), webhooks: eventWebhooks() } as OpenAPIObject;
}

export function mountOpenApi(app: INestApplication, document: OpenAPIObject): void {
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
    customSiteTitle: 'Seller Payments Platform API',
  });
}
