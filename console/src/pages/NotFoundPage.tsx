import { useTitle } from '../hooks';
import { Link } from '../router';

export function NotFoundPage() {
  useTitle('Page not found');
  return (
    <>
      <h1>Page not found</h1>
      <p>
        There is no page at this address. <Link to="/dashboard">Back to the dashboard</Link>
      </p>
    </>
  );
}
