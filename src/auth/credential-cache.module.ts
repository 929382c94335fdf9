import { Global, Module } from '@nestjs/common';
import { CredentialCache } from './credential-cache';

/** The per-process credential cache: read by authentication, told of changes by the services that make them. */
@Global()
@Module({ providers: [CredentialCache], exports: [CredentialCache] })
export class CredentialCacheModule {}
