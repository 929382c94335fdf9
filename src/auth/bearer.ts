/** The token of an `Authorization: Bearer <token>` header; undefined for any other header, or none. */
export function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
}
