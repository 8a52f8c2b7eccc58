import { FailedPreconditionError, NotFoundError } from "../../domain/errors.js";

/**
 * Why an UnlinkResource of `resourceId` from `project` is refused, worded alike on every engine; undefined
 * when the link may go. No link: NOT_FOUND (whether the resource exists elsewhere or not, so nothing about
 * other projects is told). The owner's link: FAILED_PRECONDITION, because a resource always stays in the
 * project that owns it; removing it is deleting the resource.
 */
export function unlinkRefusal(project: string, resourceId: string, linked: boolean, ownerProject: string | undefined): Error | undefined {
  if (!linked) return new NotFoundError(`resource ${resourceId} is not linked into ${project}`);
  if (ownerProject === project) {
    return new FailedPreconditionError(
      `resource ${resourceId} is owned by ${project}: the owning project's link cannot be removed; delete the resource (DeleteResource) instead`,
    );
  }
  return undefined;
}
