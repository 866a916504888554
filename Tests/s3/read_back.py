#!/usr/bin/env python3
"""Reads back, with boto3, what Flipbook wrote to an S3 bucket, and checks that the objects are
ordinary S3 objects another tool can use: the original's bytes hash to its content id, the
record is JSON naming that content, a named image's record points at an original that exists.

  read_back.py --endpoint URL --bucket B --prefix P [--content-id SHA ...] [--name N=SHA ...]
               [--multipart SHA ...] [--gone SHA ...]

Prints one line per object checked; exits 1 on the first mismatch.
"""
import argparse
import hashlib
import json
import sys

import boto3
from botocore.config import Config


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--bucket", required=True)
    ap.add_argument("--prefix", default="")
    ap.add_argument("--content-id", action="append", default=[])
    ap.add_argument("--name", action="append", default=[], help="NAME=SHA256")
    ap.add_argument("--multipart", action="append", default=[], help="a content id uploaded in parts")
    ap.add_argument("--gone", action="append", default=[], help="a content id whose objects must not exist")
    args = ap.parse_args()
    s3 = boto3.client("s3", endpoint_url=args.endpoint, region_name="us-east-1", aws_access_key_id="reader",
                      aws_secret_access_key="reader", config=Config(s3={"addressing_style": "path"}))
    p = args.prefix

    def fail(message):
        print(f"read_back: FAIL {message}")
        sys.exit(1)

    def original(sha):
        obj = s3.get_object(Bucket=args.bucket, Key=f"{p}originals/{sha}")
        body = obj["Body"].read()
        if hashlib.sha256(body).hexdigest() != sha:
            fail(f"originals/{sha}: its bytes hash to {hashlib.sha256(body).hexdigest()}")
        print(f"read_back: originals/{sha[:12]}… {len(body)} bytes, SHA-256 matches, ETag {obj['ETag']}")
        return obj, body

    for sha in args.content_id:
        obj, body = original(sha)
        record = json.loads(s3.get_object(Bucket=args.bucket, Key=f"{p}meta/{sha}.json")["Body"].read())
        if record["id"] != sha or record["sha256"] != sha or record["source"] != "upload":
            fail(f"meta/{sha}.json: {record['id']} {record['sha256']} {record['source']}")
        if record["metadata"]["fileBytes"] != len(body) or record["metadata"]["frameCount"] < 1:
            fail(f"meta/{sha}.json: metadata {record['metadata']['fileBytes']} bytes, {record['metadata']['frameCount']} frames")
        print(f"read_back: meta/{sha[:12]}….json: {record['metadata']['format']}, "
              f"{record['metadata']['frameCount']} frames, {record['metadata']['fileBytes']} bytes")
    for pair in args.name:
        name, sha = pair.split("=", 1)
        record = json.loads(s3.get_object(Bucket=args.bucket, Key=f"{p}names/{name}")["Body"].read())
        if record["id"] != name or record["sha256"] != sha or record["source"] != "named":
            fail(f"names/{name}: {record['id']} {record['sha256']} {record['source']}")
        original(sha)
        refs = s3.list_objects_v2(Bucket=args.bucket, Prefix=f"{p}refs/{sha}/").get("Contents", [])
        if f"{p}refs/{sha}/{name}" not in [o["Key"] for o in refs]:
            fail(f"refs/{sha}/{name} missing")
        print(f"read_back: names/{name} -> {sha[:12]}…, referenced")
    for sha in args.multipart:
        etag = s3.head_object(Bucket=args.bucket, Key=f"{p}originals/{sha}")["ETag"].strip('"')
        if "-" not in etag:
            fail(f"originals/{sha}: ETag {etag} is not a multipart upload's")
        print(f"read_back: originals/{sha[:12]}… was uploaded in {etag.split('-')[1]} parts")
        uploads = s3.list_multipart_uploads(Bucket=args.bucket).get("Uploads", [])
        if uploads:
            fail(f"{len(uploads)} multipart uploads left incomplete")
    for sha in args.gone:
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket=args.bucket, Prefix=p).get("Contents", [])]
        left = [k for k in keys if sha in k]
        if left:
            fail(f"{sha} deleted, but {left} remain")
        print(f"read_back: nothing left of {sha[:12]}…")
    print("read_back: ok")


if __name__ == "__main__":
    main()
