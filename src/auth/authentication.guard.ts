import { ExecutionContext, Injectable } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { UnauthorizedError } from '../common/errors/api-error';
import { bearerToken } from './bearer';
import type { AuthenticatedRequest } from './principal';
import { JwtStrategy } from './strategies/jwt.strategy';
import { isSessionOrKeyShaped } from './token-shape';

/**
 * Authentication: one injectable guard over the `jwt` and `api-key` strategies. Each strategy
 * takes only tokens of its shape (a JWT, a UUID), so exactly one of them reads the database.
 * Sets `request.user`; failures answer 401 with the service's codes. Used by AccessGuard, which
 * then authorises.
 */
@Injectable()
export class AuthenticationGuard extends AuthGuard(['jwt', 'api-key']) {
  constructor(private readonly jwt: JwtStrategy) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const header = request.headers.authorization;
    if (!header) throw new UnauthorizedError('not_authenticated', 'Send a bearer token in the Authorization header.');
    const token = bearerToken(header);
    if (!token) throw new UnauthorizedError('invalid_token', 'The Authorization header must be "Bearer <token>".');
    if (!isSessionOrKeyShaped(token)) {
      throw new UnauthorizedError('invalid_token', 'The bearer token is neither a JWT nor an API key.');
    }
    // The API key strategy (passport-http-bearer) splits the header on one space: it gets the
    // header as bearerToken read it, so that spacing the JWT strategy takes is taken for keys too.
    request.headers.authorization = `Bearer ${token}`;
    const verified = this.jwt.verifiedPrincipal(token);
    if (verified) {
      request.user = await verified;
      return true;
    }
    return (await super.canActivate(context)) as boolean;
  }

  override handleRequest<T>(error: unknown, user: T, info: unknown): T {
    // A failure inside a strategy (an API error, an unreachable database) keeps its meaning.
    if (error) throw error;
    if (!user) {
      const reasons = Array.isArray(info) ? info : [info];
      if (reasons.some((reason) => (reason as Error | undefined)?.name === 'TokenExpiredError')) {
        throw new UnauthorizedError('token_expired', 'The token has expired.');
      }
      throw new UnauthorizedError('invalid_token', 'The token is not valid.');
    }
    return user;
  }
}
