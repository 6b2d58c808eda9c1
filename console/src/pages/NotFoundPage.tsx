import { useTitle } from '../hooks';
import { Link } from '../router';
import { useSession } from '../session';

/** What any address that is no page shows (the gateway answers it with HTTP 404), with the way back in. */
export function NotFoundPage() {
  useTitle('Page not found');
  const { status } = useSession();
  return (
    <>
      <h1>Page not found</h1>
      <p>There is no page at this address. {status === 'signedIn' ? <Link to="/dashboard">Back to the dashboard</Link> : <Link to="/sign-in">Sign in</Link>}</p>
    </>
  );
}
